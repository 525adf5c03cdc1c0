package hostfile_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nightshift-dev/nightshift/internal/hostfile"

	"github.com/nightshift-dev/nightshift"
)

// localHost runs the commands Read sends (wc, tail, head: fixed,
// read-only commands, never a model's) with this machine's sh in dir,
// counting them; fail makes the n-th command's connection fail; mutate runs
// before the n-th command.
type localHost struct {
	dir      string
	commands []string
	fail     int
	mutate   func(n int)
}

func (h *localHost) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	h.commands = append(h.commands, command)
	n := len(h.commands)
	if h.mutate != nil {
		h.mutate(n)
	}
	if n == h.fail {
		return nightshift.Exec{ExitCode: -1}, errors.New("ssh: connection lost")
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = h.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := nightshift.Exec{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.ExitCode = ee.ExitCode()
	} else if err != nil {
		return res, err
	}
	return res, nil
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), hostfile.Chunk/16*2+100) // 2 chunks and a bit
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("big.xml", big)
	write("it's.xml", []byte("quoted\n"))
	write("empty", nil)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		limit      int
		fail       int
		mutate     bool
		want       []byte
		err        error
		msg        string
		commands   int
	}{
		{name: "chunks", path: "big.xml", limit: len(big), want: big, commands: 4},
		{name: "quoted path", path: "it's.xml", limit: 100, want: []byte("quoted\n"), commands: 2},
		{name: "empty", path: "empty", limit: 100, want: []byte{}, commands: 1},
		{name: "missing", path: "nope.xml", limit: 100, err: hostfile.ErrFile, msg: "no such file", commands: 1},
		{name: "fifo", path: "fifo", limit: 100, err: hostfile.ErrFile, msg: "not a regular file", commands: 1},
		{name: "too large", path: "big.xml", limit: len(big) - 1, err: hostfile.ErrFile, msg: "more than", commands: 1},
		{name: "host lost", path: "big.xml", limit: len(big), fail: 2, err: hostfile.ErrHost, msg: "connection lost", commands: 2},
		{name: "changed while read", path: "big.xml", limit: len(big), mutate: true, err: hostfile.ErrFile, msg: "changed while read", commands: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &localHost{dir: dir, fail: tc.fail}
			if tc.mutate {
				h.mutate = func(n int) {
					if n == 4 {
						write("big.xml", big[:len(big)-10])
					}
				}
				defer write("big.xml", big)
			}
			got, err := hostfile.Read(context.Background(), h, tc.path, tc.limit)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("Read: %v; want %v mentioning %q", err, tc.err, tc.msg)
				}
			} else if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("Read: %d bytes, %v; want %d bytes", len(got), err, len(tc.want))
			}
			if len(h.commands) != tc.commands {
				t.Fatalf("%d commands, want %d: %q", len(h.commands), tc.commands, h.commands)
			}
		})
	}
}
