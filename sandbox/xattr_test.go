package sandbox_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/sandbox"
)

// xattrSyscalls are lsetxattr's and llistxattr's numbers, for perl's
// syscall (perl-base is the one interpreter every Debian host has; the
// attr tools are not installed on the target).
var xattrSyscalls = map[string][2]int{
	"amd64": {189, 195},
	"arm64": {6, 12},
}

// xattrPerl is a perl program that sets the xattr named by its first
// argument (value "1") on each other argument, or, with "list" first, prints
// each argument's xattr names, sorted, one line per file.
func xattrPerl(t *testing.T) string {
	nr, ok := xattrSyscalls[runtime.GOARCH]
	if !ok {
		t.Fatalf("no xattr syscall numbers for %s", runtime.GOARCH)
	}
	return fmt.Sprintf(`perl -e '
if ($ARGV[0] eq "list") { shift; for my $f (@ARGV) { my $b = "\0" x 4096; my $n = syscall(%d, $f, $b, 4096); die "llistxattr $f: $!\n" if $n < 0; print join(" ", sort(grep { length } split(/\0/, substr($b, 0, $n)))), "\n" } exit }
my $x = shift; my $v = "1"; for my $f (@ARGV) { syscall(%d, $f, $x, $v, 1, 0) == 0 or die "lsetxattr $f $x: $!\n" }'`, nr[1], nr[0])
}

// TestCommitTakesNoXattrsFromTheTrial: the effects show a file's content,
// mode, owner and type, not its extended attributes, so a commit must not
// carry the trial's: an xattr the command set (the way a POSIX ACL or a
// file capability is set) and the overlay's own marks stay in the
// sandbox. A changed file keeps the host's xattrs; a new one gets none.
// Before, the commit's cp -a copied them all onto the host.
func TestCommitTakesNoXattrsFromTheTrial(t *testing.T) {
	h := debian(t)
	ctx := context.Background()
	sb := sandbox.New(h.c, sandbox.Config{Timeout: time.Minute})
	perl := xattrPerl(t)
	h.host(t, "rm -rf /srv/xa && mkdir -p /srv/xa && printf 'a\\n' > /srv/xa/own && chmod 0640 /srv/xa/own && "+perl+" user.host /srv/xa/own")
	if got := h.host(t, perl+" list /srv/xa/own"); got != "user.host\n" {
		t.Fatalf("the fixture's xattrs: %q", got)
	}

	tr, err := sb.Try(ctx, "printf 'b\\n' >> /srv/xa/own && chmod 0600 /srv/xa/own && echo n > /srv/xa/new && "+perl+" user.trial /srv/xa/own /srv/xa/new")
	if err != nil {
		t.Fatalf("Try: %v", err)
	}
	if tr.Exec.ExitCode != 0 {
		t.Fatalf("the command failed in the sandbox: %+v", tr.Exec)
	}
	if err := sb.Commit(ctx, tr); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if got := h.host(t, "cat /srv/xa/own /srv/xa/new && stat -c '%a %u %g' /srv/xa/own /srv/xa/new"); got != "a\nb\nn\n600 0 0\n644 0 0\n" {
		t.Errorf("content, modes and owners after the commit: %q", got)
	}
	if got := h.host(t, perl+" list /srv/xa/own /srv/xa/new"); got != "user.host\n\n" {
		t.Errorf("xattrs after the commit (own, new) = %q, want the host's own on the changed file and none on the new one", got)
	}
	if err := sb.Undo(ctx, tr.ID); err != nil {
		t.Fatalf("Undo: %v", err)
	}
	if got := h.host(t, "cat /srv/xa/own && stat -c %a /srv/xa/own && ls /srv/xa && "+perl+" list /srv/xa/own"); got != "a\n640\nown\nuser.host\n" {
		t.Errorf("after undo: %q", got)
	}
}
