package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
)

// ed25519HostKey is the hardening that keeps only the ed25519 host key, as
// SSG's content asks of some profiles: it leaves sshd presenting none of
// the ECDSA and RSA keys a Debian host has.
const ed25519HostKey = `printf 'HostKey /etc/ssh/ssh_host_ed25519_key\n' > /etc/ssh/sshd_config.d/10-hostkey.conf`

// TestHostKeyHardeningCommitted: the main mode gives the effect judge the
// facts of its own SSH connection (sshexec's SSHFacts): the worker's
// known_hosts pins the host's ed25519 key, so an ed25519-only HostKey is
// committed on a real Debian 12 target, and the rule ends fixed. The same
// trial's effects, judged without those facts, are refused (every host
// key type a Debian host has must then stay): the facts are what let it
// through.
func TestHostKeyHardeningCommitted(t *testing.T) {
	t.Parallel() // its own Debian target and model server
	tg, c := startDebian(t, debtarget.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	// The judge on the trial's real effects, with and without the facts.
	facts, err := c.SSHFacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if facts.HostKeyType != "ssh-ed25519" || len(facts.KnownHostKeyTypes) != 1 {
		t.Fatalf("facts %+v; want the ed25519 host key known_hosts pins", facts)
	}
	sb := sandbox.New(c, sandbox.Config{})
	if err := sb.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	trial, err := sb.Try(ctx, ed25519HostKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Discard(ctx, trial); err != nil {
		t.Fatal(err)
	}
	if s := trial.Effects.SSHD; s == nil || !s.TestOK || s.Effective["hostkey"] != "/etc/ssh/ssh_host_ed25519_key" {
		t.Fatalf("sshd's view after the trial: %+v; want the ed25519 host key alone", s)
	}
	pol := safety.EffectsPolicy{Login: tg.User, SSHPort: tg.Port}
	if refs := safety.JudgeEffects(trial.Effects, pol); !strings.Contains(fmt.Sprint(refs), "rsa host key") {
		t.Errorf("without the facts: %v; want refused for the RSA host key", refs)
	}
	if refs := safety.JudgeEffects(trial.Effects, pol.WithSSH(facts)); len(refs) != 0 {
		t.Errorf("with the facts: refused: %v", refs)
	}

	// The main mode commits it.
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "rules.yaml")
	check := `test "$(/usr/sbin/sshd -T 2>/dev/null | grep -c '^hostkey ')" = 1 && /usr/sbin/sshd -T | grep -qx 'hostkey /etc/ssh/ssh_host_ed25519_key'`
	rules := fmt.Sprintf("rules:\n  - id: sshd_ed25519_host_key_only\n    check: %q\n    max_attempts: 2\n    paths: [/etc/ssh/sshd_config.d]\n", check)
	if err := os.WriteFile(rulesFile, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	_, url := scapModel(t, map[string]string{"sshd_ed25519_host_key_only": ed25519HostKey}, 1)
	code, out, errOut := cli(t, "", "--rules", rulesFile, "--rule", "sshd_ed25519_host_key_only", "--host", fmt.Sprintf("%s@%s", tg.User, tg.Addr),
		"--identity", tg.IdentityFile, "--known-hosts", tg.KnownHostsFile, "--base-url", url, "--max-attempts", "2", "--json")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if r := summary(t, out)["sshd_ed25519_host_key_only"]; r.Status != "fixed" || r.Attempts != 1 {
		t.Errorf("rule: %+v; want fixed at attempt 1", r)
	}
	if !strings.Contains(out, `"verdict":"committed"`) || !strings.Contains(out, `+HostKey /etc/ssh/ssh_host_ed25519_key`) {
		t.Errorf("no committed sandbox evidence with the HostKey line in the events:\n%s", out)
	}
	ex, err := c.Run(ctx, "/usr/sbin/sshd -T | grep '^hostkey '")
	if err != nil || strings.TrimSpace(ex.Stdout) != "hostkey /etc/ssh/ssh_host_ed25519_key" {
		t.Errorf("the host's sshd after the night: %q (%v); want the ed25519 host key alone", ex.Stdout, err)
	}

	// worker run: PubkeyAcceptedAlgorithms ssh-ed25519 alone keeps the
	// worker's ed25519 key (without the facts, ECDSA and RSA keys must
	// stay accepted).
	inv := filepath.Join(dir, "hosts.ini")
	invText := fmt.Sprintf("[debian]\ndebian12 ansible_host=%s ansible_port=%d ansible_user=%s ansible_ssh_private_key_file=%s\n", tg.Host, tg.Port, tg.User, tg.IdentityFile)
	if err := os.WriteFile(inv, []byte(invText), 0o600); err != nil {
		t.Fatal(err)
	}
	pubkey := `printf 'PubkeyAcceptedAlgorithms ssh-ed25519\n' > /etc/ssh/sshd_config.d/11-pubkey.conf`
	rules = fmt.Sprintf("rules:\n  - id: sshd_ed25519_keys_only\n    check: %q\n    max_attempts: 2\n    paths: [/etc/ssh/sshd_config.d]\n",
		`/usr/sbin/sshd -T | grep -qx 'pubkeyacceptedalgorithms ssh-ed25519'`)
	if err := os.WriteFile(rulesFile, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	_, url = scapModel(t, map[string]string{"sshd_ed25519_keys_only": pubkey}, 1)
	report := filepath.Join(dir, "night.json")
	code, out, errOut = cli(t, "", "run", "--rules", rulesFile, "--rule", "sshd_ed25519_keys_only", "--inventory", inv, "--journal", filepath.Join(dir, "night.db"),
		"--known-hosts", tg.KnownHostsFile, "--base-url", url, "--max-attempts", "2", "--json-report", report, "--no-progress")
	raw, err := os.ReadFile(report)
	if code != exitOK || err != nil {
		t.Fatalf("worker run: exit %d (%v)\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	if !strings.Contains(string(raw), `"committed"`) || !strings.Contains(string(raw), `+PubkeyAcceptedAlgorithms ssh-ed25519`) {
		t.Errorf("worker run: no committed change of PubkeyAcceptedAlgorithms in the report:\n%s", raw)
	}
}
