package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/readfile"
)

// TestLoadRefusesSpecialFiles: a FIFO given as the rules file, or inside a
// rules directory, and a device are refused by name at once, never opened
// for a blocking read.
func TestLoadRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("rules: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "b.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, dir, "/dev/zero"} {
		done := make(chan error, 1)
		go func() { _, err := Load(path); done <- err }()
		select {
		case err := <-done:
			name := filepath.Base(fifo)
			if path == "/dev/zero" {
				name = "/dev/zero"
			}
			if !errors.Is(err, readfile.ErrNotRegular) || !strings.Contains(err.Error(), name+": not a regular file") {
				t.Errorf("Load(%s): %v; want the file named as not regular", path, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Load(%s) hangs", path)
		}
	}
}
