// Package hostfile reads a regular file on a remote host through commands
// run on it (the connection a run already holds: no second login), in
// chunks small enough that no runner's output cap ever cuts one. It is how
// SCAP datastreams are read from the hosts whose oscap evaluates them.
//
// A FIFO or a device is refused without being opened (it could block or
// never end); a file over the limit is refused by its size before being
// read; a file that changes size while it is read is an error. Errors wrap
// ErrHost when the host did not answer (the transport failed: the outcome
// of reading is unknown, another host may do) and ErrFile otherwise (no
// such file, not a regular file, too large, changed while read); both are
// an *Error.
//
// Read is safe for concurrent use if the Runner is.
package hostfile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift/scap"

	"github.com/nightshift-dev/nightshift"
)

// Chunk is how much of the file one command returns: well under
// sshexec's default output cap (1 MiB).
const Chunk = 512 << 10

var (
	// ErrHost: the host did not answer a command.
	ErrHost = errors.New("host did not answer")
	// ErrFile: the host answered, but the file cannot be read whole.
	ErrFile = errors.New("cannot read the file on the host")
)

// Error is Read's error: "read PATH on the host: why". It matches ErrHost
// when the host did not answer, else ErrFile, and unwraps to its cause (a
// file over the limit: scap.ErrTooLarge).
type Error struct {
	Path string
	// Transport is set when the host did not answer.
	Transport bool
	Err       error
}

func (e *Error) Error() string { return "read " + e.Path + " on the host: " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Is matches ErrHost or ErrFile.
func (e *Error) Is(target error) bool {
	return (target == ErrHost && e.Transport) || (target == ErrFile && !e.Transport)
}

// Read returns the contents of the regular file at path on the host t
// runs commands on, refusing more than limit bytes.
func Read(ctx context.Context, t nightshift.Runner, path string, limit int) ([]byte, error) {
	fail := func(format string, a ...any) error { return &Error{Path: path, Err: fmt.Errorf(format, a...)} }
	q := quote(path)
	// A FIFO or a device would make wc wait or read forever: only a
	// regular file is measured.
	r, err := t.Run(ctx, "if [ ! -e "+q+" ]; then echo 'no such file' >&2; exit 1; elif [ ! -f "+q+" ]; then "+
		"echo 'not a regular file' >&2; exit 1; fi; wc -c < "+q)
	if err != nil {
		return nil, &Error{Path: path, Transport: true, Err: err}
	}
	if r.ExitCode != 0 {
		return nil, fail("exit %d: %s", r.ExitCode, firstLineOr(r.Stderr, "no error message"))
	}
	size, err := strconv.ParseInt(strings.TrimSpace(r.Stdout), 10, 64)
	if err != nil || size < 0 {
		return nil, fail("wc -c printed %q", strings.TrimSpace(r.Stdout))
	}
	if size > int64(limit) {
		return nil, fail("%d bytes, more than %d: %w", size, limit, scap.ErrTooLarge)
	}
	buf := make([]byte, 0, size)
	for off := int64(0); off < size; off += Chunk {
		want := min(Chunk, size-off)
		r, err := t.Run(ctx, fmt.Sprintf("tail -c +%d -- %s | head -c %d", off+1, q, Chunk))
		if err != nil {
			return nil, &Error{Path: path, Transport: true, Err: err}
		}
		if r.ExitCode != 0 || r.StdoutCut > 0 || int64(len(r.Stdout)) != want {
			return nil, fail("bytes %d-%d: exit %d, %d bytes (the file changed while read?): %s",
				off, off+want, r.ExitCode, len(r.Stdout), firstLineOr(r.Stderr, "no error message"))
		}
		buf = append(buf, r.Stdout...)
	}
	return buf, nil
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func firstLineOr(s, def string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return def
	}
	line, _, _ := strings.Cut(s, "\n")
	return line
}
