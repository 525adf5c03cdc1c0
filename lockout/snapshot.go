package lockout

import (
	"context"
	"fmt"
	"strings"

	nightshift "github.com/nightshift-dev/nightshift"
)

// Snapshot is a snapshot on the host of what the canary protects (see the
// package documentation), in its own directory.
type Snapshot struct {
	// ID names it; Dir is its directory on the host.
	ID, Dir string
}

// Snapshot takes a snapshot of what the canary protects. As root it covers
// the login's home directory mode and ~/.ssh, /etc/ssh, /etc/pam.d, the
// account files, /etc/security, /etc/nologin, the sudoers files and the
// nft and iptables rulesets; as another login only the home directory mode
// and ~/.ssh. One round trip.
func (g *Guard) Snapshot(ctx context.Context, r nightshift.Runner) (*Snapshot, error) {
	id := newID()
	cmd := `base=` + g.baseExpr() + `; sh -c ` + quote(script("snapshot.sh")) + ` sh "$base/snap/` + id + `" ` + quote(g.cfg.User)
	out, err := run(ctx, r, "snapshot", cmd)
	if err != nil {
		return nil, err
	}
	last := lastLine(out)
	dir, ok := strings.CutPrefix(last, "OK ")
	if !ok || !strings.HasSuffix(dir, "/snap/"+id) {
		return nil, &HostError{Op: "snapshot", Output: "unexpected output: " + last}
	}
	return &Snapshot{ID: id, Dir: dir}, nil
}

// Restore puts the snapshot back exactly (contents, modes, owners and
// mtimes; files created since are removed; the firewall rulesets are
// replaced by the saved ones) and then, as root, brings sshd back as a
// fired switch does (sshd -t, then a restart of the ssh unit where systemd
// runs, else a stop and a start of the daemon). One round trip.
func (g *Guard) Restore(ctx context.Context, r nightshift.Runner, s *Snapshot) error {
	if s == nil || !plainPath.MatchString(s.Dir) {
		return fmt.Errorf("%w: no snapshot to restore", ErrConfig)
	}
	// In a session of its own (setsid -w where util-linux has it): a
	// command timeout of the kept connection kills the session's process
	// group, and a restore must not stop half-way.
	out, err := run(ctx, r, "restore", g.restoreScript(s, ""))
	if err != nil {
		return err
	}
	if lastLine(out) != "OK" {
		return &HostError{Op: "restore", Output: strings.TrimSpace(out)}
	}
	return nil
}

// restoreScript restores s and then, as root, runs before (a shell
// fragment that may end the script) and brings sshd back.
func (g *Guard) restoreScript(s *Snapshot, before string) string {
	return `sw=; setsid -w true 2>/dev/null && sw="setsid -w"
$sw sh -c ` + quote(script("restore.sh")) + ` sh ` + quote(s.Dir) + ` || exit 1
[ "$(id -u)" = 0 ] || exit 0
` + before + `sh -c ` + quote(script("sshd.sh")) + ` sh
`
}

// Remove deletes the snapshot's directory on the host. Removing a removed
// snapshot is not an error.
func (g *Guard) Remove(ctx context.Context, r nightshift.Runner, s *Snapshot) error {
	if s == nil || !plainPath.MatchString(s.Dir) || !strings.Contains(s.Dir, "/snap/") && !strings.HasSuffix(s.Dir, "/pre") {
		return fmt.Errorf("%w: no snapshot to remove", ErrConfig)
	}
	_, err := run(ctx, r, "remove", `rm -rf `+quote(s.Dir))
	return err
}
