package journal

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
)

// TestJournalKeepsNoSecret: evidence a Runner did not redact is stored
// redacted (no password hash in the file's bytes), and the journal's files
// are readable by their owner only (they keep command output, which may
// hold what a command printed).
func TestJournalKeepsNoSecret(t *testing.T) {
	ctx := context.Background()
	const hash = "$6$abcdefgh$oGoxMtczJ0/xYkNKQnGuC3pOdNoGsZRZNs7n5JzX8KfMJWEmD2Bx4wBt/tMCPvjE87aPyrlQPEKxEcxV6d4J6."
	j, path := openTest(t, Config{})
	run := must(j.StartRun(ctx, RunSpec{Name: "secrets"}))(t)
	task := must(j.StartTask(ctx, run, "accounts_password", "h1"))(t)
	p := must(j.BeginCommand(ctx, task, 1, "usermod -p HASH root"))(t)
	ev := &nightshift.Evidence{Verdict: nightshift.VerdictCommitted, Effects: nightshift.Effects{Changes: []nightshift.FileChange{{
		Path: "/etc/shadow", Change: nightshift.ChangeModified,
		Diff: "--- a/etc/shadow\n+++ b/etc/shadow\n@@ -1 +1 @@\n-root:*:19000:0:99999:7:::\n+root:" + hash + ":19000:0:99999:7:::\n",
	}}}}
	ok(t, j.FinishCommand(ctx, p, CommandResult{Exec: nightshift.Exec{Evidence: ev}}))
	steps := must(j.Steps(ctx, task))(t)
	got := steps[len(steps)-1].Command.Result.Evidence
	if got == nil || !strings.Contains(got.Effects.Changes[0].Diff, "+root:<password hash changed, $6$>:19000") {
		t.Fatalf("stored evidence %+v, want the masked shadow line", got)
	}
	if !strings.Contains(ev.Effects.Changes[0].Diff, hash) {
		t.Error("FinishCommand changed the caller's evidence")
	}
	ok(t, j.Close())
	files, err := filepath.Glob(path + "*")
	if err != nil || len(files) == 0 {
		t.Fatalf("journal files: %v %v", files, err)
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, want owner-only", f, fi.Mode().Perm())
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "oGoxMtczJ0") {
			t.Errorf("%s holds the password hash", f)
		}
	}
}

// TestJournalMasksTextAndOutput: a password hash or a private key in a
// command's text, its output, its error, a check's output, a skipped
// command's detail, a model reply (a JSON payload whose tool call holds
// the command) or a distillation's lines and messages never reaches the
// journal's files; each is read back masked. Before, only evidence was.
func TestJournalMasksTextAndOutput(t *testing.T) {
	ctx := context.Background()
	const hash = "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7"
	const keyBody = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
	key := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + keyBody + "\nQyNTUxOQAAACBhc2RmYXNkZmFzZGZhc2RmYXNkZmFzZGZhc2Rm\n-----END OPENSSH PRIVATE KEY-----\n"
	secrets := []string{"X3DX6M94c7o.9agCG9G317fhZg9SqC", keyBody, "QyNTUxOQAAACBhc2RmYXNk"}
	tests := []struct {
		name   string
		record func(t *testing.T, j *Journal, run RunID, task TaskID)
		read   func(t *testing.T, j *Journal, task TaskID) string // the text read back
		want   string                                             // in what is read back
	}{
		{
			name: "command text and output",
			record: func(t *testing.T, j *Journal, _ RunID, task TaskID) {
				p := must(j.BeginCommand(ctx, task, 1, "echo 'root:"+hash+"' | chpasswd -e"))(t)
				ok(t, j.FinishCommand(ctx, p, CommandResult{Exec: nightshift.Exec{Stdout: "root:" + hash + ":1::::::\n", Stderr: key}, Error: "lost: " + key}))
			},
			read: func(t *testing.T, j *Journal, task TaskID) string {
				c := lastStep(t, j, task).Command
				return c.Command + "|" + c.Result.Stdout + "|" + c.Result.Stderr + "|" + c.Result.Error
			},
			want: "echo 'root:<password hash $y$>' | chpasswd -e|root:<password hash $y$>:1::::::\n|[OPENSSH private key not shown]\n|lost: [OPENSSH private key not shown]\n",
		},
		{
			name: "a skipped command",
			record: func(t *testing.T, j *Journal, _ RunID, task TaskID) {
				ok(t, j.RecordSkippedCommand(ctx, task, 1, "usermod -p '"+hash+"' root", nightshift.ActionRefused, "refused: "+hash))
			},
			read: func(t *testing.T, j *Journal, task TaskID) string {
				c := lastStep(t, j, task).Command
				return c.Command + "|" + c.Detail
			},
			want: "usermod -p '<password hash $y$>' root|refused: <password hash $y$>",
		},
		{
			name: "check output",
			record: func(t *testing.T, j *Journal, _ RunID, task TaskID) {
				ok(t, j.RecordCheck(ctx, task, CheckRecord{Attempt: 1, Status: nightshift.CheckFail, ExitCode: 1, Output: "root:" + hash + ":1::::::", Detail: key}))
			},
			read: func(t *testing.T, j *Journal, task TaskID) string {
				c := lastStep(t, j, task).Check
				return c.Output + "|" + c.Detail
			},
			want: "root:<password hash $y$>:1::::::|[OPENSSH private key not shown]\n",
		},
		{
			name: "a model reply whose tool call holds the command",
			record: func(t *testing.T, j *Journal, run RunID, task TaskID) {
				args, err := json.Marshal(map[string]string{"command": "cat > /root/k <<'E'\n" + key + "E\necho 'root:" + hash + "' | chpasswd -e"})
				if err != nil {
					t.Fatal(err)
				}
				msg := map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
					"function": map[string]any{"name": "ssh_apply", "arguments": string(args)}}}}
				ok(t, j.RecordEvent(ctx, run, task, 1, "model_reply", msg))
			},
			read: func(t *testing.T, j *Journal, task TaskID) string {
				var m struct {
					ToolCalls []struct {
						Function struct{ Arguments string } `json:"function"`
					} `json:"tool_calls"`
				}
				if err := json.Unmarshal(lastStep(t, j, task).Event.Payload, &m); err != nil || len(m.ToolCalls) != 1 {
					t.Fatalf("the stored reply is not the message it was: %v", err)
				}
				var args map[string]string
				if err := json.Unmarshal([]byte(m.ToolCalls[0].Function.Arguments), &args); err != nil {
					t.Fatalf("the stored tool call's arguments are not JSON: %v", err)
				}
				return args["command"]
			},
			want: "cat > /root/k <<'E'\n[OPENSSH private key not shown]\nE\necho 'root:<password hash $y$>' | chpasswd -e",
		},
		{
			name: "a distillation",
			record: func(t *testing.T, j *Journal, _ RunID, task TaskID) {
				ok(t, j.RecordDistillation(ctx, task, Distillation{Attempt: 1, Turn: 2, FromTurn: 1, ToTurn: 1,
					Lines:    []string{"[Turn 1: ran usermod -p '" + hash + "' root → exit 0]"},
					Messages: []openai.ChatCompletionMessage{{Role: "tool", Content: key}}}))
			},
			read: func(t *testing.T, j *Journal, task TaskID) string {
				d := lastStep(t, j, task).Distillation
				return strings.Join(d.Lines, "|") + "|" + d.Messages[0].Content
			},
			want: "[Turn 1: ran usermod -p '<password hash $y$>' root → exit 0]|[OPENSSH private key not shown]\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, path := openTest(t, Config{})
			run := must(j.StartRun(ctx, RunSpec{Name: "secrets"}))(t)
			task := must(j.StartTask(ctx, run, "accounts_password", "h1"))(t)
			tt.record(t, j, run, task)
			if got := tt.read(t, j, task); got != tt.want {
				t.Errorf("read back %q, want %q", got, tt.want)
			}
			ok(t, j.Close())
			files, err := filepath.Glob(path + "*")
			if err != nil || len(files) == 0 {
				t.Fatalf("journal files: %v %v", files, err)
			}
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range secrets {
					if strings.Contains(string(b), s) {
						t.Errorf("%s holds %q", f, s)
					}
				}
				if strings.Contains(string(b), "PRIVATE KEY-----") {
					t.Errorf("%s holds a private key block", f)
				}
			}
		})
	}
}

// lastStep is task's last recorded step.
func lastStep(t *testing.T, j *Journal, task TaskID) Step {
	t.Helper()
	steps := must(j.Steps(context.Background(), task))(t)
	if len(steps) == 0 {
		t.Fatal("no steps")
	}
	return steps[len(steps)-1]
}
