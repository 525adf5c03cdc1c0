//go:build linux

package sshexec

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// promptNoEcho writes prompt to tty and reads a line with echo off,
// restoring the terminal's settings afterwards.
func promptNoEcho(tty *os.File, prompt string) ([]byte, error) {
	fd := tty.Fd()
	var old syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&old))); e != 0 {
		return nil, fmt.Errorf("%w: read terminal settings: %w", ErrNoTerminal, e)
	}
	quiet := old
	quiet.Lflag &^= syscall.ECHO
	quiet.Lflag |= syscall.ICANON | syscall.ISIG
	quiet.Iflag |= syscall.ICRNL
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCSETS, uintptr(unsafe.Pointer(&quiet))); e != 0 {
		return nil, fmt.Errorf("%w: turn off echo: %w", ErrNoTerminal, e)
	}
	defer syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCSETS, uintptr(unsafe.Pointer(&old)))
	if _, err := tty.WriteString(prompt); err != nil {
		return nil, fmt.Errorf("write passphrase prompt: %w", err)
	}
	line, err := readLine(tty)
	tty.WriteString("\n")
	if err != nil {
		return nil, fmt.Errorf("read passphrase: %w", err)
	}
	return line, nil
}
