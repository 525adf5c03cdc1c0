package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadHostFileRefusesSpecialFiles: a datastream path that is a FIFO or
// a device on the host is refused by name, not read forever; a missing one
// is named too.
func TestReadHostFileRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "ds.xml"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"ds.xml":    "read ds.xml on the host: exit 1: not a regular file",
		"/dev/zero": "read /dev/zero on the host: exit 1: not a regular file",
		"gone.xml":  "read gone.xml on the host: exit 1: no such file",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := readHostFile(ctx, &localHost{dir: dir}, path, 1<<20)
		cancel()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", path, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ds.xml")); err != nil {
		t.Fatal(err)
	}
}
