package sshtarget

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// TestCommandsSeeAnEmptyHome checks that, as root, the target's commands
// see an empty home directory (so the machine's ~/.bashrc is not run for
// every command) and that the machine's own home directory is untouched.
func TestCommandsSeeAnEmptyHome(t *testing.T) {
	testenv.NeedRoot(t, "the empty home's mount namespace")
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(u.HomeDir, ".nightshift-home-test")
	if err := os.WriteFile(marker, []byte("machine\n"), 0o600); err != nil {
		testenv.Unavailable(t, "home directory %s is not writable: %v", u.HomeDir, err)
	}
	defer os.Remove(marker)

	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"plain", Options{}},
		{"sandbox", Options{Sandbox: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := Start(context.Background(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			out, err := sshRun(t, tg, `echo "$HOME"; ls -A "$HOME"; echo target >"$HOME/written"`)
			if err != nil {
				t.Fatalf("ssh: %v\n%s\nsshd log:\n%s", err, out, tg.Log())
			}
			if want := u.HomeDir + "\n"; out != want {
				t.Fatalf("home and its listing %q, want %q (empty)", out, want)
			}
			got, err := os.ReadFile(marker)
			if err != nil || string(got) != "machine\n" {
				t.Fatalf("machine's home changed: %q, %v", got, err)
			}
			if _, err := os.Stat(filepath.Join(u.HomeDir, "written")); err == nil {
				os.Remove(filepath.Join(u.HomeDir, "written"))
				t.Fatal("a command's write reached the machine's home directory")
			}
			if b, err := os.ReadFile(filepath.Join(tg.Dir, "home", "written")); err != nil || !strings.Contains(string(b), "target") {
				t.Fatalf("write to the target's home: %q, %v", b, err)
			}
		})
	}
}
