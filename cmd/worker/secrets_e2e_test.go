package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"golang.org/x/crypto/ssh"
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

// TestSecretsNotInEvidence: on a real Debian 12 target the model's
// commands (1) set root's password hash (usermod -p, the hash made on the
// host) and rotate the ECDSA host key: the judge refuses the new root
// password; (2) set daemon's password (chpasswd) behind a lock (usermod
// -L: a usable new hash would be refused) and rotate the key again:
// committed; (3) blank root's password: the judge refuses it from the raw
// shadow diff; (4) the fix. Neither hash nor the new key's material is in
// the journal's files, the JSON, HTML and JUnit reports, the worker's
// output, or any prompt the model server received; what a reviewer needs
// (a hash changed, a blank password refused, which key changed) is.
// Then (4) prints daemon's shadow line and the ed25519 host private key
// on stdout and stderr (secrets in the command's OUTPUT), (5) sets bin's
// password with chpasswd -e from a hash written in the command and writes
// a private key from a here-document (secrets in the command's TEXT), and
// (6) is the fix: those secrets are in none of the places either (the
// model's prompts are their text; its own tool calls, which it wrote,
// keep their text: see package worker). Before the output and the text
// were masked, (4) and (5) left the hashes and keys in all of them.
func TestSecretsNotInEvidence(t *testing.T) {
	t.Parallel() // its own Debian target and model server
	tg, c := startDebian(t, debtarget.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	const (
		crypt  = `perl -e 'print crypt(q(S3cret-e2e), q($6$nsE2Esalt$))'`
		rotate = "rm -f /etc/ssh/ssh_host_ecdsa_key /etc/ssh/ssh_host_ecdsa_key.pub && ssh-keygen -q -t ecdsa -N '' -f /etc/ssh/ssh_host_ecdsa_key"
		root   = `usermod -p "$(` + crypt + `)" root && ` + rotate
		daemon = "echo 'daemon:Nightshift-e2e-Secret-1' | chpasswd && usermod -L daemon && " + rotate
		blank  = `eval "$(printf 'passwd -%s root' d)"`
		fix    = "touch /etc/nightshift-secrets-done"
		output = "grep -h '^daemon:' /etc/shadow; cat /etc/ssh/ssh_host_ed25519_key; cat /etc/ssh/ssh_host_ed25519_key >&2"
	)
	// The secrets the command text (5) carries: a real hash the target's
	// crypt(3) makes and a fresh private key.
	ex, err := c.Run(ctx, `perl -e 'print crypt(q(Text-e2e-secret), q($6$nsTextSalt$))'`)
	if err != nil || !strings.HasPrefix(ex.Stdout, "$6$nsTextSalt$") {
		t.Fatalf("crypt on the target: %q %v", ex.Stdout, err)
	}
	textHash := ex.Stdout
	_, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(sk, "nightshift text key")
	if err != nil {
		t.Fatal(err)
	}
	textKey := string(pem.EncodeToMemory(blk))
	text := "echo 'bin:" + textHash + "' | chpasswd -e && usermod -L bin && " +
		"install -m 600 /dev/null /etc/ssh/nightshift_text_key && cat > /etc/ssh/nightshift_text_key <<'KEY'\n" + textKey + "KEY"
	pol := &secretsPolicy{commands: []string{root, daemon, blank, output, text, fix}}
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
	rules := "rules:\n  - id: secrets_e2e\n    check: \"test -f /etc/nightshift-secrets-done\"\n    max_attempts: 6\n" +
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
		"--known-hosts", tg.KnownHostsFile, "--base-url", url+"/v1", "--max-attempts", "6", "--no-progress",
		"--json-report", jsonRep, "--html", htmlRep, "--junit", junitRep)
	if code != exitOK {
		t.Fatalf("worker run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// The secrets as the host has them now, and the refused root hash as
	// the host's crypt(3) makes it again.
	ex, err = c.Run(ctx, crypt+"; echo; getent shadow root daemon | cut -d: -f2; sed -n '2,4p' /etc/ssh/ssh_host_ecdsa_key")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(ex.Stdout), "\n")
	if len(got) != 6 || !strings.HasPrefix(got[0], "$6$nsE2Esalt$") || got[1] != "*" || !strings.HasPrefix(got[2], "!$y$") {
		rep, _ := os.ReadFile(jsonRep)
		t.Fatalf("the root hash, root's and daemon's password fields and the new key on the host: %q; want $6$nsE2Esalt$…, * (refused), !$y$… (committed) and three key lines\nreport:\n%s", ex.Stdout, rep)
	}
	secrets := map[string]string{"the refused root hash": got[0], "its digest": got[0][strings.LastIndex(got[0], "$"):],
		"daemon's hash": got[2][1:], "daemon's digest": got[2][strings.LastIndex(got[2], "$"):]}
	for i, l := range got[3:] {
		secrets[fmt.Sprintf("host key line %d", i+2)] = l
	}
	// Through the output (4): the ed25519 host key the command printed
	// (daemon's hash is above).
	ex, err = c.Run(ctx, "sed -e '1d' -e '$d' /etc/ssh/ssh_host_ed25519_key")
	if err != nil || strings.Count(ex.Stdout, "\n") < 2 {
		t.Fatalf("the target's ed25519 host key: %q %v", ex.Stdout, err)
	}
	for i, l := range strings.Split(strings.TrimSpace(ex.Stdout), "\n") {
		secrets[fmt.Sprintf("printed host key line %d", i+2)] = l
	}
	// Through the text (5).
	secrets["the hash in the command"] = textHash
	secrets["its digest in the command"] = textHash[strings.LastIndex(textHash, "$"):]
	keyLines := strings.Split(strings.TrimSpace(textKey), "\n")
	for i, l := range keyLines[1 : len(keyLines)-1] {
		secrets[fmt.Sprintf("written key line %d", i+2)] = l
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
		"the HTML report":     html.UnescapeString(read(htmlRep)), // as a browser shows it (&#43; is +)
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
		`+root:\u003cpassword hash changed, $6$\u003e`,               // the refused root hash (JSON escapes < and >)
		`+daemon:\u003clocked (!), password hash changed, $y$\u003e`, // the committed one
		`secret contents not shown (SSH host private key)`,
		`+root:\u003cblank password\u003e`, // the refused blanking's
		`"refused"`,
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("the JSON report lacks %s:\n%s", want, rep)
		}
	}
	if p := pol.prompts(); !strings.Contains(p, "REFUSED") || !strings.Contains(p, "changed /etc/shadow") ||
		!strings.Contains(p, "daemon:!<password hash $y$>") || !strings.Contains(p, "[OPENSSH private key not shown]") {
		t.Errorf("the model was not told what the commands did and printed:\n%s", p)
	}
	// The commands themselves are in the report, masked: a reviewer sees
	// what ran.
	for _, want := range []string{
		`echo 'bin:\u003cpassword hash $6$\u003e' | chpasswd -e`,
		`[OPENSSH private key not shown]`,
		`grep -h '^daemon:' /etc/shadow`,
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("the JSON report lacks %s:\n%s", want, rep)
		}
	}
	if !strings.Contains(rep, "would blank root's password") || !strings.Contains(rep, "would set root's password to a new hash") {
		t.Errorf("the JSON report lacks the judge's refusals of root's new and blank password:\n%s", rep)
	}
}
