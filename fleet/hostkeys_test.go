package fleet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/orchestrate"
)

// TestCommandJudgesWithTheWorkersSSHFacts: the fleet's command activity
// gives the effect judge the facts of its kept SSH connection to the host
// (the worker's known_hosts pins the host's ed25519 key, its key is
// ed25519), so on a real Debian 12 target an ed25519-only HostKey and
// PubkeyAcceptedAlgorithms ssh-ed25519 are committed, while dropping the
// ed25519 host key is refused as a lockout. Without the facts the first two
// were refused (every host key and key type a Debian host has had to stay).
func TestCommandJudgesWithTheWorkersSSHFacts(t *testing.T) {
	testenv.NeedRoot(t, "a Debian 12 target in namespaces")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tg, err := debtarget.Start(ctx, debtarget.Options{Sandbox: true})
	if err != nil {
		t.Fatalf("start the Debian 12 target: %v", err)
	}
	t.Cleanup(func() { tg.Close() })
	sc := tg.SSHConfig()
	// Called directly, not as an activity: no heartbeat comes due.
	a := &fleet.Activities{Connector: orchestrate.SSHConnector{Base: sc}, HeartbeatEvery: time.Hour}
	defer a.Close()
	h := inventory.Host{Name: "debian12", Address: sc.Host, Port: sc.Port, User: sc.User}
	tests := []struct {
		name, command string
		verdict       nightshift.Verdict
		reason        string
	}{
		{"ed25519 host key only", `printf 'HostKey /etc/ssh/ssh_host_ed25519_key\n' > /etc/ssh/sshd_config.d/10-hostkey.conf`, nightshift.VerdictCommitted, ""},
		{"ed25519 keys only", `printf 'PubkeyAcceptedAlgorithms ssh-ed25519\n' > /etc/ssh/sshd_config.d/11-pubkey.conf`, nightshift.VerdictCommitted, ""},
		{"RSA host key only", `printf 'HostKey /etc/ssh/ssh_host_rsa_key\n' > /etc/ssh/sshd_config.d/10-hostkey.conf`, nightshift.VerdictRefused,
			"no host key the worker's known_hosts accepts (ssh-ed25519)"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := a.Command(ctx, fleet.CommandInput{Host: h, Rule: "sshd_host_keys", Attempt: i + 1, Command: tc.command, Sandbox: true,
				Scope: []string{"/etc/ssh/sshd_config.d"}})
			if err != nil || res.Err != "" {
				t.Fatalf("Command: %v %s", err, res.Err)
			}
			ev := res.Exec.Evidence
			if ev == nil || ev.Verdict != tc.verdict || !strings.Contains(strings.Join(ev.Reasons, "; "), tc.reason) {
				t.Fatalf("evidence %+v; want %v naming %q", ev, tc.verdict, tc.reason)
			}
		})
	}
}
