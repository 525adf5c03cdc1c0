package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
)

// runFixture is the target's /run/sbx20 before each case: a text file, a
// file whose mode changes, one to delete, a tree to delete and a tree
// holding a FIFO (which the trial's copy of /run leaves out).
const runFixture = "rm -rf /run/sbx20 && mkdir -p /run/sbx20/tree /run/sbx20/fifos && " +
	"printf 'x=1\\ny=2\\n' > /run/sbx20/conf && echo m > /run/sbx20/mode && echo bye > /run/sbx20/gone && " +
	"echo a > /run/sbx20/tree/a && echo b > /run/sbx20/tree/b && mkfifo /run/sbx20/fifos/p && " +
	"chmod 0644 /run/sbx20/conf /run/sbx20/mode /run/sbx20/gone && ln -s conf /run/sbx20/link"

// runManifest is the test's own view of /run/sbx20 on the target: every
// entry's type, mode, owner and size, link targets and file hashes.
const runManifest = "cd /run/sbx20 && find . -printf '%p %y %m %u %g %s %l\\n' | sort && find . -type f -exec sha256sum {} + | sort"

// TestRunIsRecorded: what a command changes under /run is an effect like
// any other file (created, changed, deleted, mode, link), with its real
// /run path and a diff, compared with the copy of /run taken at the start;
// sockets and FIFOs stay out of the trial. Before /run was recorded, the
// trial's /run was a throw-away copy and every case here saw no change.
func TestRunIsRecorded(t *testing.T) {
	h := debian(t)
	ctx := context.Background()
	sb := sandbox.New(h.c, sandbox.Config{Timeout: time.Minute})
	tests := []struct {
		name, command string
		path          string
		change        nightshift.Change
		diff          []string // substrings of the change's diff
		mode          uint32   // the mode after, when not 0
		entries       int      // of a deleted tree
	}{
		{name: "created", command: "printf 'kernel.x=1\\n' > /run/sbx20/new.conf", path: "/run/sbx20/new.conf", change: nightshift.ChangeCreated, diff: []string{"+++ b/run/sbx20/new.conf", "+kernel.x=1"}},
		{name: "changed", command: "sed -i 's/^x=1/x=9/' /run/sbx20/conf", path: "/run/sbx20/conf", change: nightshift.ChangeModified, diff: []string{"--- a/run/sbx20/conf", "-x=1", "+x=9"}},
		{name: "deleted", command: "rm /run/sbx20/gone", path: "/run/sbx20/gone", change: nightshift.ChangeDeleted},
		{name: "tree deleted", command: "rm -rf /run/sbx20/tree", path: "/run/sbx20/tree", change: nightshift.ChangeDeleted, entries: 2},
		{name: "mode changed", command: "chmod 0600 /run/sbx20/mode", path: "/run/sbx20/mode", change: nightshift.ChangeMeta, mode: 0o600},
		{name: "link changed", command: "ln -sfn mode /run/sbx20/link", path: "/run/sbx20/link", change: nightshift.ChangeModified},
		{name: "a sysctl.d drop-in", command: "mkdir -p /run/sysctl.d && printf 'kernel.x=1\\n' > /run/sysctl.d/99-sbx20.conf", path: "/run/sysctl.d/99-sbx20.conf", change: nightshift.ChangeCreated, diff: []string{"+kernel.x=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.host(t, runFixture)
			tr, err := sb.Try(ctx, tt.command)
			if err != nil {
				t.Fatalf("Try: %v", err)
			}
			defer sb.Discard(ctx, tr)
			if tr.Exec.ExitCode != 0 {
				t.Fatalf("exec = %+v", tr.Exec)
			}
			c, ok := find(tr.Effects, tt.path)
			if !ok || c.Change != tt.change {
				t.Fatalf("%s: got %+v (found %v), want %s; all changes: %+v", tt.path, c, ok, tt.change, tr.Effects.Changes)
			}
			for _, d := range tt.diff {
				if !strings.Contains(c.Diff, d) {
					t.Errorf("diff %q lacks %q", c.Diff, d)
				}
			}
			if tt.mode != 0 && c.After.Mode != tt.mode {
				t.Errorf("mode after = %o, want %o", c.After.Mode, tt.mode)
			}
			if c.Entries != tt.entries {
				t.Errorf("entries = %d, want %d", c.Entries, tt.entries)
			}
			// Only the command's own change: nothing of the helper's
			// (the recorder, its action log, /run/sshd) is an effect.
			for _, o := range tr.Effects.Changes {
				if strings.HasPrefix(o.Path, "/run/") && !strings.HasPrefix(o.Path, "/run/sbx20") && !strings.HasPrefix(o.Path, "/run/sysctl.d") {
					t.Errorf("an effect the command did not make: %+v", o)
				}
			}
		})
	}
	t.Run("no sockets or FIFOs in the trial", func(t *testing.T) {
		h.host(t, runFixture)
		tr, err := sb.Try(ctx, "ls -A /run/sbx20/fifos; find /run -type s -o -type p | head -n 3")
		if err != nil {
			t.Fatalf("Try: %v", err)
		}
		defer sb.Discard(ctx, tr)
		if out := strings.TrimSpace(tr.Exec.Stdout); out != "" {
			t.Errorf("the trial sees %q", out)
		}
	})
}

// TestRunCommitUndo commits /run changes of every kind with pre-images
// and undoes them byte for byte; a /run file the host changed after the
// trial, and a /run tree whose FIFOs the trial never saw, stop the commit.
func TestRunCommitUndo(t *testing.T) {
	h := debian(t)
	ctx := context.Background()
	sb := sandbox.New(h.c, sandbox.Config{Timeout: time.Minute})
	h.host(t, runFixture)
	before := h.host(t, runManifest)

	tr, err := sb.Try(ctx, "sed -i 's/^x=1/x=9/' /run/sbx20/conf && echo new > /run/sbx20/new && rm /run/sbx20/gone && rm -rf /run/sbx20/tree && chmod 0600 /run/sbx20/mode && ln -sfn mode /run/sbx20/link && mkdir /run/sbx20/d2")
	if err != nil {
		t.Fatalf("Try: %v", err)
	}
	if got := h.host(t, runManifest); got != before {
		t.Fatalf("the host's /run changed before the commit:\n%s\nwant\n%s", got, before)
	}
	if err := sb.Commit(ctx, tr); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if got := h.host(t, "cd /run/sbx20 && cat conf new && stat -c %a mode && readlink link && ls -A | sort | tr '\\n' ' '"); got != "x=9\ny=2\nnew\n600\nmode\nconf d2 fifos link mode new " {
		t.Errorf("after the commit: %q", got)
	}
	if err := sb.Undo(ctx, tr.ID); err != nil {
		t.Fatalf("Undo: %v", err)
	}
	if got := h.host(t, runManifest); got != before {
		t.Fatalf("undo did not restore /run/sbx20:\n%s\nwant\n%s", got, before)
	}

	conflicts := []struct {
		name, command, host, path string
	}{
		{"the host changed the file", "echo mine > /run/sbx20/conf", "echo host-moved-on > /run/sbx20/conf", "/run/sbx20/conf"},
		{"a tree with FIFOs the trial did not see", "rm -rf /run/sbx20/fifos", "true", "/run/sbx20/fifos"},
	}
	for _, tt := range conflicts {
		t.Run(tt.name, func(t *testing.T) {
			h.host(t, runFixture)
			tr, err := sb.Try(ctx, tt.command)
			if err != nil {
				t.Fatalf("Try: %v", err)
			}
			h.host(t, tt.host)
			want := h.host(t, runManifest)
			err = sb.Commit(ctx, tr)
			var ce *sandbox.ConflictError
			if !errors.Is(err, sandbox.ErrConflict) || !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != tt.path {
				t.Fatalf("Commit = %v, want a conflict on %s", err, tt.path)
			}
			if got := h.host(t, runManifest); got != want {
				t.Errorf("a stopped commit changed /run/sbx20:\n%s\nwant\n%s", got, want)
			}
			_ = sb.Discard(ctx, tr)
		})
	}
}

// TestRunJudged: /run changes reach the judge with their real paths, so
// a rule's strict scope refuses a runtime sysctl.d drop-in or unit off
// its surfaces, and a drop-in of the rule's own parameter is committed.
func TestRunJudged(t *testing.T) {
	h := debian(t)
	ctx := context.Background()
	sb := sandbox.New(h.c, sandbox.Config{Timeout: time.Minute})
	run := sandbox.NewRunner(sb, safety.EffectsPolicy{Login: "root", SSHPort: 22}, sandbox.RunnerConfig{})
	sshd := sandbox.Scope{Strict: true, Paths: []string{"/etc/ssh/sshd_config"}, Keys: []string{"permitrootlogin"}}
	kptr := sandbox.Scope{Strict: true, Paths: []string{"/etc/sysctl.conf", "/etc/sysctl.d", "/run/sysctl.d"}, Sysctl: []string{"kernel.kptr_restrict"}, Keys: []string{"kernel.kptr_restrict"}}
	h.host(t, "rm -rf /run/sysctl.d/9*-sbx20*.conf /run/systemd/system/sbx20.service /run/nologin")
	tests := []scopeCase{
		{"a runtime sysctl.d drop-in for an sshd rule", "mkdir -p /run/sysctl.d && printf 'kernel.x=1\\n' > /run/sysctl.d/99-sbx20.conf", sshd, nightshift.VerdictRefused, "/run/sysctl.d/99-sbx20.conf"},
		{"another parameter in /run/sysctl.d for a kptr rule", "mkdir -p /run/sysctl.d && echo 'kernel.modules_disabled = 1' > /run/sysctl.d/98-sbx20.conf", kptr, nightshift.VerdictRefused, "kernel.modules_disabled = 1"},
		{"a runtime unit for an sshd rule", "mkdir -p /run/systemd/system && printf '[Service]\\nExecStart=/bin/true\\n' > /run/systemd/system/sbx20.service", sshd, nightshift.VerdictRefused, "/run/systemd/system"},
		{"/run/nologin for an sshd rule", "touch /run/nologin", sshd, nightshift.VerdictRefused, "would create /run/nologin"},
		{"/run/nologin without a scope", "touch /run/nologin", sandbox.Scope{}, nightshift.VerdictRefused, "would create /run/nologin"},
		{"the rule's own parameter in /run/sysctl.d", "mkdir -p /run/sysctl.d && echo 'kernel.kptr_restrict = 1' > /run/sysctl.d/97-sbx20.conf", kptr, nightshift.VerdictCommitted, ""},
	}
	runScopeCases(ctx, t, run, tests)
	if got := h.host(t, "cat /run/sysctl.d/97-sbx20.conf; ls /run/sysctl.d/99-sbx20.conf /run/sysctl.d/98-sbx20.conf /run/systemd/system/sbx20.service /run/nologin 2>&1 | grep -v 'No such' ; true"); strings.TrimSpace(got) != "kernel.kptr_restrict = 1" {
		t.Errorf("the host's /run holds %q", got)
	}
	h.host(t, "rm -f /run/sysctl.d/97-sbx20.conf")
}
