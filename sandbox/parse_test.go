package sandbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// TestConfigParses runs, through the Runner on a Debian 12 target with
// sudo installed, commands that leave a configuration its own program
// rejects (fresh6's blind corpus had them committed: a sudoers line visudo
// rejects makes sudo refuse to run for everyone, an apt.conf.d file
// without its semicolon fails every apt command): each is refused with the
// program's own message, and the host keeps its files. The same
// configurations written correctly are committed, and so is a change to a
// configuration the host already had broken (not the command's doing).
func TestConfigParses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tg := sudoTarget(ctx, t)
	cfg := tg.SSHConfig()
	cfg.CommandTimeout = 5 * time.Minute
	root, err := sshexec.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	host := func(cmd string) string {
		t.Helper()
		r, err := root.Run(ctx, cmd)
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("%s: %v (exit %d): %s", cmd, err, r.ExitCode, r.Stderr)
		}
		return r.Stdout
	}
	sb := sandbox.New(root, sandbox.Config{Timeout: time.Minute})
	run := sandbox.NewRunner(sb, safety.EffectsPolicy{Login: debtarget.LoginUser}, sandbox.RunnerConfig{})
	// The host's own view: sudo parses, apt parses.
	host("visudo -c && apt-config dump >/dev/null && apt-get indextargets >/dev/null")
	for _, tc := range []struct {
		name, setup, command, cleanup string
		// refused: the reason names these; "" commits.
		refused []string
		// program is the check that must appear in the effects.
		program string
	}{
		{name: "sudoers drop-in visudo rejects",
			command: `echo 'Defualts use_pty' >/etc/sudoers.d/hardening && chmod 0440 /etc/sudoers.d/hardening`,
			refused: []string{"visudo -c", "syntax error", "/etc/sudoers", "for " + debtarget.LoginUser + " too"}, program: "visudo -c"},
		{name: "sudoers line visudo rejects",
			command: `sed -i '$a Defaults use_pty,,' /etc/sudoers`,
			refused: []string{"visudo -c", "syntax error"}, program: "visudo -c"},
		{name: "apt.conf.d without its semicolon",
			command: `printf 'APT::Install-Recommends "false"\n' >/etc/apt/apt.conf.d/99norecommends`,
			refused: []string{"apt-config dump", "E: ", "99norecommends"}, program: "apt-config dump"},
		{name: "sources entry apt cannot read",
			command: `echo 'deb http://deb.debian.org/debian' >/etc/apt/sources.list.d/extra.list`,
			refused: []string{"indextargets", "Malformed entry", "extra.list"}, program: "apt-get"},
		{name: "valid sudoers drop-in",
			command: `echo 'Defaults use_pty' >/etc/sudoers.d/hardening && chmod 0440 /etc/sudoers.d/hardening`,
			program: "visudo -c", cleanup: "rm -f /etc/sudoers.d/hardening"},
		{name: "valid apt.conf.d file",
			command: `printf 'APT::Install-Recommends "false";\n' >/etc/apt/apt.conf.d/99norecommends`,
			program: "apt-config dump", cleanup: "rm -f /etc/apt/apt.conf.d/99norecommends"},
		{name: "valid sources entry",
			command: `echo 'deb http://deb.debian.org/debian bookworm-backports main' >/etc/apt/sources.list.d/backports.list`,
			program: "apt-get", cleanup: "rm -f /etc/apt/sources.list.d/backports.list"},
		{name: "sudoers already broken on the host",
			setup:   `printf 'Defualts env_reset\n' >/etc/sudoers.d/broken && chmod 0440 /etc/sudoers.d/broken && ! visudo -c >/dev/null 2>&1`,
			command: `echo 'Defaults use_pty' >/etc/sudoers.d/hardening && chmod 0440 /etc/sudoers.d/hardening`,
			program: "visudo -c", cleanup: "rm -f /etc/sudoers.d/hardening /etc/sudoers.d/broken"},
		{name: "apt.conf.d already broken on the host",
			setup:   `printf 'Foo "1"\n' >/etc/apt/apt.conf.d/98broken && ! apt-config dump >/dev/null 2>&1`,
			command: `printf 'APT::Install-Recommends "false";\n' >/etc/apt/apt.conf.d/99norecommends`,
			program: "apt-config dump", cleanup: "rm -f /etc/apt/apt.conf.d/99norecommends /etc/apt/apt.conf.d/98broken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != "" {
				host(tc.setup)
			}
			if tc.cleanup != "" {
				defer host(tc.cleanup)
			}
			before := host("cat /etc/sudoers | sha256sum; ls /etc/sudoers.d /etc/apt/apt.conf.d /etc/apt/sources.list.d")
			ex, err := run.Run(ctx, tc.command)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			ev := ex.Evidence
			if ev == nil {
				t.Fatalf("no evidence: %+v", ex)
			}
			var checks []string
			for _, p := range ev.Effects.Parses {
				checks = append(checks, p.Program)
			}
			if !strings.Contains(strings.Join(checks, "\n"), tc.program) {
				t.Errorf("the effects carry the checks %q, want %s among them", checks, tc.program)
			}
			reasons := strings.Join(ev.Reasons, "\n")
			if len(tc.refused) > 0 {
				if ev.Verdict != nightshift.VerdictRefused {
					t.Fatalf("verdict %s (reasons %q), want refused; effects %+v", ev.Verdict, ev.Reasons, ev.Effects.Parses)
				}
				t.Logf("refused: %q", ev.Reasons)
				for _, w := range tc.refused {
					if !strings.Contains(reasons, w) {
						t.Errorf("the reasons %q do not name %q", reasons, w)
					}
				}
				if after := host("cat /etc/sudoers | sha256sum; ls /etc/sudoers.d /etc/apt/apt.conf.d /etc/apt/sources.list.d"); after != before {
					t.Errorf("a refused command changed the host:\n%s\nwas\n%s", after, before)
				}
				return
			}
			if ev.Verdict != nightshift.VerdictCommitted {
				t.Fatalf("verdict %s (reasons %q), want committed; checks %+v", ev.Verdict, ev.Reasons, ev.Effects.Parses)
			}
			// The checks write nothing of their own into the trial.
			for _, c := range ev.Effects.Changes {
				if !strings.Contains(tc.command, c.Path) {
					t.Errorf("committed %s %s, which the command did not write", c.Change, c.Path)
				}
			}
			if ev.Trial != "" {
				if err := sb.Undo(ctx, ev.Trial); err != nil {
					t.Errorf("Undo: %v", err)
				}
			}
		})
	}
	// What the host is left with still parses.
	host("visudo -c && apt-config dump >/dev/null")

	// The checks run programs of the trial's tree, chrooted, as root beside
	// the host, outside the command's sandbox: never ones the command
	// replaced. A replaced visudo or sshd that ran would leave
	// /tmp/ran-outside in the trial (the checks run before the effects
	// are gathered).
	t.Run("replaced programs are not run", func(t *testing.T) {
		const fake = `printf '#!/bin/sh\ntouch /tmp/ran-outside\n' >%[1]s && chmod 755 %[1]s && `
		for _, c := range []struct{ name, command, want string }{
			{"visudo", fmt.Sprintf(fake, "/usr/sbin/visudo") + `echo 'Defaults use_pty' >/etc/sudoers.d/hardening`, "visudo -c"},
			{"sshd", fmt.Sprintf(fake, "/usr/sbin/sshd") + `sed -i '1i PermitRootLogin no' /etc/ssh/sshd_config`, "sshd"},
		} {
			tr, err := sb.Try(ctx, c.command)
			if err != nil {
				t.Fatalf("%s: Try: %v", c.name, err)
			}
			if _, ran := find(tr.Effects, "/tmp/ran-outside"); ran {
				t.Errorf("%s: the command's own %s ran outside the sandbox", c.name, c.name)
			}
			switch c.name {
			case "visudo":
				if len(tr.Effects.Parses) != 1 || !strings.Contains(tr.Effects.Parses[0].Skipped, "changed programs") {
					t.Errorf("visudo: checks %+v, want visudo -c skipped, saying why", tr.Effects.Parses)
				}
			case "sshd":
				s := tr.Effects.SSHD
				if s == nil || s.TestOK || !strings.Contains(s.TestOutput, "was not run") {
					t.Errorf("sshd: check %+v, want sshd -t failed closed, saying why", s)
				} else if refs := safety.JudgeEffects(tr.Effects, safety.EffectsPolicy{Login: debtarget.LoginUser}); len(refs) == 0 {
					t.Error("sshd: not refused")
				}
			}
			if err := sb.Discard(ctx, tr); err != nil {
				t.Fatal(err)
			}
		}
	})

	// The false-refusal corpora's target (TestFalseRefusals) has no sudo
	// package, so visudo checks none of their trials there. Here, with
	// sudo installed, every corpus command that names sudoers or apt's
	// configuration is tried: the checks run and none leaves a
	// configuration its program rejects.
	t.Run("corpora", func(t *testing.T) {
		host(offlineApt)
		defer host("rm -f /etc/apt/apt.conf.d/99nightshift-offline")
		checked := 0
		for _, c := range loadCorpora(t) {
			if !strings.Contains(c.Command, "sudoers") && !strings.Contains(c.Command, "/etc/apt/") {
				continue
			}
			tr, err := sb.Try(ctx, c.Command)
			if err != nil {
				t.Fatalf("%s %s: Try: %v", c.Source, c.Name, err)
			}
			for _, p := range tr.Effects.Parses {
				if p.Skipped == "" {
					checked++
				}
				t.Logf("%s %s: %s before %v after %v %s", c.Source, c.Name, p.Program, p.BeforeOK, p.AfterOK, p.Skipped)
				if p.Broken() {
					t.Errorf("%s %s: %s rejects what it left: %s", c.Source, c.Name, p.Program, p.Message)
				}
			}
			if err := sb.Discard(ctx, tr); err != nil {
				t.Fatal(err)
			}
		}
		if checked < 10 {
			t.Errorf("%d checks ran on the corpora's sudoers and apt commands, want at least 10", checked)
		}
		t.Logf("%d checks ran", checked)
	})
}
