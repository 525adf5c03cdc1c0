package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// secretsPolicy proposes one scripted command per attempt and keeps every
// message of every request it is sent: what the model saw.
type secretsPolicy struct {
	commands []string
	mu       sync.Mutex
	seen     strings.Builder
}

func (*secretsPolicy) Name() string { return "secrets" }

func (p *secretsPolicy) Next(c vllmsim.Conversation) vllmsim.Generation {
	p.mu.Lock()
	for _, m := range c.Messages {
		p.seen.WriteString(m.Content + "\n")
	}
	p.mu.Unlock()
	cmd := p.commands[min(c.Attempt, len(p.commands))-1]
	return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(cmd, "attempt "+fmt.Sprint(c.Attempt))}}
}

func (p *secretsPolicy) prompts() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen.String()
}

// TestSecretsNotInEvidence: on a real Debian 12 target a command sets
// root's password (chpasswd: the hash is made on the host) and rotates
// the ECDSA host key; it is committed. The next attempt blanks root's
// password; the judge refuses it from the raw shadow diff. Neither the
// hash nor the new key's material is in the journal's file, the JSON, HTML
// and JUnit reports, the worker's output, or any prompt the model server
// received; what the reviewer needs (a hash changed, a blank password was
// refused, which key changed) is.
func TestSecretsNotInEvidence(t *testing.T) {
	t.Parallel() // its own Debian target and model server
	tg, c := startDebian(t, debtarget.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	const (
		rotate = "echo 'root:Nightshift-e2e-Secret-1' | chpasswd && rm -f /etc/ssh/ssh_host_ecdsa_key /etc/ssh/ssh_host_ecdsa_key.pub && " +
			"ssh-keygen -q -t ecdsa -N '' -f /etc/ssh/ssh_host_ecdsa_key"
		blank = "passwd -d root"
		fix   = "touch /etc/nightshift-secrets-done"
	)
	pol := &secretsPolicy{commands: []string{rotate, blank, fix}}
	m, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := vllmsim.New(vllmsim.Config{Counter: vllmsim.NewModelCounter(m), Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := srv.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)

	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "rules.yaml")
	rules := "rules:\n  - id: secrets_e2e\n    check: \"test -f /etc/nightshift-secrets-done\"\n    max_attempts: 3\n" +
		"    paths: [/etc/shadow, /etc/ssh, /etc/nightshift-secrets-done]\n"
	if err := os.WriteFile(rulesFile, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(dir, "hosts.ini")
	invText := fmt.Sprintf("[debian]\ndebian12 ansible_host=%s ansible_port=%d ansible_user=%s ansible_ssh_private_key_file=%s\n", tg.Host, tg.Port, tg.User, tg.IdentityFile)
	if err := os.WriteFile(inv, []byte(invText), 0o600); err != nil {
		t.Fatal(err)
	}
	journal, jsonRep, htmlRep, junitRep := filepath.Join(dir, "night.db"), filepath.Join(dir, "night.json"), filepath.Join(dir, "night.html"), filepath.Join(dir, "night.xml")
	code, out, errOut := cli(t, "", "run", "--rules", rulesFile, "--rule", "secrets_e2e", "--inventory", inv, "--journal", journal,
		"--known-hosts", tg.KnownHostsFile, "--base-url", url+"/v1", "--max-attempts", "3", "--no-progress",
		"--json-report", jsonRep, "--html", htmlRep, "--junit", junitRep)
	if code != exitOK {
		t.Fatalf("worker run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// The secrets as the host has them now.
	ex, err := c.Run(ctx, "getent shadow root | cut -d: -f2; sed -n '2,4p' /etc/ssh/ssh_host_ecdsa_key")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(ex.Stdout), "\n")
	if len(got) != 4 || !strings.HasPrefix(got[0], "$y$") {
		rep, _ := os.ReadFile(jsonRep)
		t.Fatalf("root's hash and the new key on the host: %q; want a yescrypt hash (the rotation committed) and three key lines\nreport:\n%s", ex.Stdout, rep)
	}
	hash := got[0]
	secrets := map[string]string{"root's password hash": hash, "its salt and digest": hash[strings.LastIndex(hash, "$"):]}
	for i, l := range got[1:] {
		secrets[fmt.Sprintf("host key line %d", i+2)] = l
	}

	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var journalBytes strings.Builder
	files, _ := filepath.Glob(journal + "*")
	for _, f := range files {
		journalBytes.WriteString(read(f))
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("journal file %s: %v %v; want owner-only", f, fi.Mode(), err)
		}
	}
	places := map[string]string{
		"the journal's files": journalBytes.String(),
		"the JSON report":     read(jsonRep),
		"the HTML report":     read(htmlRep),
		"the JUnit report":    read(junitRep),
		"the worker's output": out + errOut,
		"the model's prompts": pol.prompts(),
	}
	for where, text := range places {
		for what, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %s", where, what)
			}
		}
		if strings.Contains(text, "PRIVATE KEY-----") {
			t.Errorf("%s holds a private key block", where)
		}
	}

	// What a reviewer needs is there.
	rep := read(jsonRep)
	for _, want := range []string{
		`+root:\u003cpassword hash changed, $y$\u003e`, // the rotation's shadow line (JSON escapes < and >)
		`secret contents not shown (SSH host private key)`,
		`+root:\u003cblank password\u003e`, // the refused blanking's
		`"refused"`,
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("the JSON report lacks %s:\n%s", want, rep)
		}
	}
	if p := pol.prompts(); !strings.Contains(p, "REFUSED") || !strings.Contains(p, "changed /etc/shadow") {
		t.Errorf("the model was not told what the commands did:\n%s", p)
	}
	// The judge refused the blank password: root keeps its hash.
	if ex, err := c.Run(ctx, "getent shadow root | cut -d: -f2"); err != nil || strings.TrimSpace(ex.Stdout) != hash {
		t.Errorf("root's password after the night: %q (%v); want the hash unchanged", ex.Stdout, err)
	}
}
