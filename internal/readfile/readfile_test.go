package readfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path  string
		limit int64
		want  error
		msg   string
	}{
		{small, 5, nil, ""},
		{small, 4, ErrTooLarge, "small: too large: more than 4 bytes"},
		{fifo, 10, ErrNotRegular, "fifo: not a regular file (a FIFO)"},
		{"/dev/zero", 10, ErrNotRegular, "/dev/zero: not a regular file (a character device)"},
		{dir, 10, ErrNotRegular, "not a regular file (a directory)"},
		{filepath.Join(dir, "missing"), 10, os.ErrNotExist, "no such file"},
	}
	for _, tt := range tests {
		done := make(chan struct{})
		var data []byte
		var err error
		go func() { data, err = Read(tt.path, tt.limit); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Read(%s) hangs", tt.path)
		}
		if tt.want == nil {
			if err != nil || string(data) != "hello" {
				t.Errorf("Read(%s) = %q, %v", tt.path, data, err)
			}
			continue
		}
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Read(%s): %v; want %v saying %q", tt.path, err, tt.want, tt.msg)
		}
	}
	if got := Size(64 << 20); got != "64 MiB" {
		t.Errorf("Size = %q", got)
	}
}
