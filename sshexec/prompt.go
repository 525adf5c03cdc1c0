package sshexec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNoTerminal is returned by TerminalPassphrase's prompt when there is no
// controlling terminal to ask on.
var ErrNoTerminal = errors.New("no terminal to prompt for a passphrase")

// TerminalPassphrase returns a Config.Passphrase prompt that asks on the
// controlling terminal (/dev/tty) with echo turned off, as ssh(1) does. It
// fails with ErrNoTerminal when there is none (cron, CI), so a batch run
// never hangs waiting for input. The passphrase is never echoed or logged.
func TerminalPassphrase() func(keyFile string) ([]byte, error) {
	return func(keyFile string) ([]byte, error) {
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoTerminal, err)
		}
		defer tty.Close()
		return promptNoEcho(tty, fmt.Sprintf("Enter passphrase for key '%s': ", keyFile))
	}
}

// readLine reads one line without its line ending, in small reads so that
// nothing past the newline is consumed.
func readLine(r io.Reader) ([]byte, error) {
	br := bufio.NewReaderSize(r, 16)
	var line []byte
	for {
		b, err := br.ReadByte()
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				return line, nil
			}
			clear(line)
			return nil, err
		}
		if b == '\n' {
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			return line, nil
		}
		line = append(line, b)
	}
}
