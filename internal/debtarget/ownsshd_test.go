package debtarget

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// TestSystemTarget: the worker logs in through the root's own sshd, which
// reads /etc/ssh/sshd_config and which `systemctl restart ssh` restarts
// (a DenyUsers added there bites after the restart, not before), as root
// and as the unprivileged login with sudo; the firewall is the target's
// own; each forwarded connection is a new one inside the namespace; its /
// and /sys are not this machine's superblocks.
func TestSystemTarget(t *testing.T) {
	testenv.NeedRoot(t, "the target's namespaces, chroot and mounts")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	hk := testHostKeys(t)
	tg, err := StartSystem(ctx, Options{Log: testLog{t}, HostKeys: hk})
	if err != nil {
		t.Fatalf("StartSystem: %v", err)
	}
	// The root's own sshd serves the given host keys: the logins below
	// verify it against KnownHostsFile, made from the root's ed25519 key.
	checkHostKeys(t, tg.Root, hk)
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	login := func(user, cmd string) (string, error) {
		cfg := tg.SSHConfig(user)
		cfg.Sudo = user != "root"
		cfg.DialTimeout = 5 * time.Second
		cfg.Redial.MaxTries = 1
		c, err := sshexec.New(cfg)
		if err != nil {
			return "", err
		}
		defer c.Close()
		ex, err := c.Run(ctx, cmd)
		return strings.TrimSpace(ex.Stdout), err
	}
	for _, user := range []string{"root", LoginUser} {
		out, err := login(user, "id -un; hostname")
		if err != nil || out != "root\nnightshift-target" {
			t.Fatalf("login as %s: %q %v", user, out, err)
		}
	}
	if _, err := login("root", `echo "DenyUsers ops" >> /etc/ssh/sshd_config`); err != nil {
		t.Fatal(err)
	}
	if _, err := login(LoginUser, "true"); err != nil {
		t.Fatalf("the running sshd read its configuration again before a restart: %v", err)
	}
	if _, err := login("root", "systemctl restart ssh"); err != nil {
		t.Fatal(err)
	}
	if _, err := login(LoginUser, "true"); err == nil {
		t.Fatal("DenyUsers ops in /etc/ssh/sshd_config did not bite after systemctl restart ssh")
	}
	if out, err := login("root", "systemctl is-active ssh"); err != nil || out != "active" {
		t.Fatalf("systemctl is-active ssh: %q %v", out, err)
	}
	// A configuration sshd -t refuses leaves ssh.service down after a
	// restart, as systemd's ExecStartPre does.
	if out, err := tg.Exec(ctx, `echo "NoSuchOption yes" >> /etc/ssh/sshd_config; systemctl restart ssh; systemctl is-active ssh`); err == nil || !strings.Contains(out, "inactive") {
		t.Fatalf("restart with a bad configuration: %q %v", out, err)
	}
	if _, err := login("root", "true"); err == nil {
		t.Fatal("a login worked with ssh.service down")
	}
	if _, err := tg.Exec(ctx, `sed -i '/^NoSuchOption/d;/^DenyUsers/d' /etc/ssh/sshd_config && systemctl start ssh`); err != nil {
		t.Fatal(err)
	}
	if _, err := login(LoginUser, "true"); err != nil {
		t.Fatalf("after the start: %v", err)
	}
	// Its / and /sys are superblocks of its own (an overlay; its network
	// namespace's sysfs), not this machine's.
	out, err := tg.Exec(ctx, "stat -c %d / /sys")
	if err != nil {
		t.Fatal(err)
	}
	in := devsInside(t, out, 2)
	for i, p := range []string{"/", "/sys"} {
		if d := hostDev(t, p); in[i] == d {
			t.Errorf("the target's %s is on device %d, this machine's %s superblock", p, d, p)
		}
	}
	hostModes := devModes(t)
	if _, err := login("root", "chmod 000 /dev/null /dev/zero /dev/tty"); err != nil {
		t.Fatal(err)
	}
	if got := devModes(t); got != hostModes {
		t.Errorf("a chmod inside the target changed this machine's device nodes: %s, was %s", got, hostModes)
	}
	if tg.HasNft {
		out, err := login("root", "nft list ruleset | wc -l")
		if err != nil || out != "0" {
			t.Fatalf("the target's own (empty) ruleset: %q %v", out, err)
		}
	}
}
