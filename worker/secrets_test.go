package worker_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// scripted proposes commands[attempt-1] (the last one past the end).
type scripted []string

func (scripted) Name() string { return "scripted" }

func (s scripted) Next(c vllmsim.Conversation) vllmsim.Generation {
	cmd := s[min(c.Attempt, len(s))-1]
	return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(cmd, fmt.Sprint("attempt ", c.Attempt))}}
}

// TestSecretsMaskedForTheModel: a command that prints a password hash and
// a private key (on stdout and stderr) is shown to the model with both
// masked, in every request after it; a command the model then writes with the mask in it (copied from what
// it was shown) is refused before it runs: the sshd on loopback never
// sees it.
func TestSecretsMaskedForTheModel(t *testing.T) {
	t.Parallel()
	const hash = "$6$abcdefgh$oGoxMtczJ0/xYkNKQnGuC3pOdNoGsZRZNs7n5JzX8KfMJWEmD2Bx4wBt/tMCPvjE87aPyrlQPEKxEcxV6d4J6."
	_, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(sk, "")
	if err != nil {
		t.Fatal(err)
	}
	key := string(pem.EncodeToMemory(blk))
	var dir string
	e := newEnv(t, envOptions{policy: func(d string) vllmsim.Policy {
		dir = d
		secrets := filepath.Join(d, "secrets")
		return scripted{
			"cat " + secrets + "; cat " + secrets + " >&2",
			"printf '%s\\n' 'root:<password hash $6$>' > " + d + "/copied",
			"touch " + d + "/done",
		}
	}})
	if err := os.WriteFile(filepath.Join(dir, "secrets"), []byte("root:"+hash+":19000:0:99999:7:::\n"+key), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.rule(fmt.Sprintf("rules:\n  - id: secrets\n    check: \"test -f %s/done\"\n    max_attempts: 3\n", dir), "secrets")
	out, err := e.worker(workerOptions{}).Fix(context.Background(), r)
	if err != nil || out.Status != nightshift.RuleFixed {
		t.Fatalf("Fix = %+v, %v", out, err)
	}
	keyLines := strings.Split(strings.TrimSpace(key), "\n")
	secrets := append([]string{"oGoxMtczJ0/xYkNKQnGuC3pOdNoGsZRZNs7n5JzX8KfMJWEmD2Bx4wBt"}, keyLines[1:len(keyLines)-1]...)
	var shown strings.Builder
	for _, req := range e.requests() {
		for _, m := range req.Messages {
			shown.WriteString(m.Content + "\n")
		}
	}
	for _, s := range secrets {
		if strings.Contains(shown.String(), s) {
			t.Errorf("a prompt holds %q", s)
		}
	}
	for _, want := range []string{"root:<password hash $6$>:19000", "[OPENSSH private key not shown]", "REFUSED: the command was not run: it holds <password hash $6$>"} {
		if !strings.Contains(shown.String(), want) {
			t.Errorf("the prompts lack %q:\n%s", want, shown.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "copied")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command holding a mask ran: %v", err)
	}
	for _, r := range e.runs {
		if strings.Contains(r.command, "<password hash") {
			t.Errorf("the target ran %q", r.command)
		}
	}
	var refused int
	for _, ev := range e.eventsOf(nightshift.EventCommand) {
		if ev.Action == nightshift.ActionRefused && strings.Contains(ev.Command, "<password hash $6$>") {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d refused commands holding the mask, want 1", refused)
	}
}
