package rules

import (
	"context"
	"errors"
	"github.com/nightshift-dev/nightshift/safety"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/nightshift-dev/nightshift"
)

type fakeRunner struct {
	res   nightshift.Exec
	err   error
	calls []string
}

func (f *fakeRunner) Run(_ context.Context, cmd string) (nightshift.Exec, error) {
	f.calls = append(f.calls, cmd)
	return f.res, f.err
}

func TestShellCheckClassification(t *testing.T) {
	tests := []struct {
		name    string
		res     nightshift.Exec
		err     error
		status  nightshift.CheckStatus
		code    int
		detail  string
		wantErr bool
	}{
		{"exit 0", nightshift.Exec{ExitCode: 0, Stdout: "ok\n"}, nil, nightshift.CheckPass, 0, "exit 0: compliant", false},
		{"exit 1", nightshift.Exec{ExitCode: 1}, nil, nightshift.CheckFail, 1, "exit 1: not compliant", false},
		{"exit 125", nightshift.Exec{ExitCode: 125}, nil, nightshift.CheckFail, 125, "exit 125: not compliant", false},
		{"exit 126", nightshift.Exec{ExitCode: 126}, nil, nightshift.CheckError, 126, "not executable", false},
		{"exit 127", nightshift.Exec{ExitCode: 127, Stderr: "sh: 1: aide: not found"}, nil, nightshift.CheckError, 127, "not found", false},
		{"exit 128", nightshift.Exec{ExitCode: 128}, nil, nightshift.CheckError, 128, "check error", false},
		{"exit 137", nightshift.Exec{ExitCode: 137}, nil, nightshift.CheckError, 137, "signal 9", false},
		{"exit 255", nightshift.Exec{ExitCode: 255}, nil, nightshift.CheckError, 255, "check error", false},
		{"negative", nightshift.Exec{ExitCode: -1}, nil, nightshift.CheckError, -1, "check error", false},
		{"signal", nightshift.Exec{ExitCode: 0, Signal: "KILL"}, nil, nightshift.CheckError, -1, "signal KILL", false},
		{"timeout", nightshift.Exec{ExitCode: 0, TimedOut: true}, nil, nightshift.CheckError, -1, "timed out", false},
		{"runner error", nightshift.Exec{}, errors.New("connection lost"), nightshift.CheckError, -1, "connection lost", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &fakeRunner{res: tt.res, err: tt.err}
			got, err := ShellCheck{Command: "test -f /etc/x"}.Evaluate(context.Background(), r)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("err = %v does not wrap the runner's error", err)
			}
			if got.Status != tt.status || got.ExitCode != tt.code || !strings.Contains(got.Detail, tt.detail) {
				t.Errorf("got %+v, want status %v code %d detail ~%q", got, tt.status, tt.code, tt.detail)
			}
			if got.Passed() != (tt.status == nightshift.CheckPass) {
				t.Errorf("Passed() = %v", got.Passed())
			}
			if len(r.calls) != 1 || r.calls[0] != "test -f /etc/x" {
				t.Errorf("runner calls = %q", r.calls)
			}
		})
	}
}

func TestShellCheckRefusals(t *testing.T) {
	r := &fakeRunner{}
	res, err := ShellCheck{Command: "grep -q x /etc/y || sudo reboot"}.Evaluate(context.Background(), r)
	var be *safety.BannedError
	if !errors.As(err, &be) || !errors.Is(err, safety.ErrBanned) || res.Status != nightshift.CheckError || len(r.calls) != 0 {
		t.Errorf("banned check: %+v, %v, %d calls", res, err, len(r.calls))
	}
	if res, err := (ShellCheck{}).Evaluate(context.Background(), r); !errors.Is(err, ErrNoCheck) || res.Status != nightshift.CheckError {
		t.Errorf("empty check: %+v, %v", res, err)
	}
	if res, err := (Rule{ID: "x"}).Evaluate(context.Background(), r); !errors.Is(err, ErrNoCheck) || res.Status != nightshift.CheckError {
		t.Errorf("rule without check: %+v, %v", res, err)
	}
	if _, err := (ShellCheck{Command: "true"}).Evaluate(context.Background(), nil); err == nil {
		t.Error("nil runner accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err = ShellCheck{Command: "true"}.Evaluate(ctx, r)
	if !errors.Is(err, context.Canceled) || res.Status != nightshift.CheckError || len(r.calls) != 0 {
		t.Errorf("cancelled context: %+v, %v, %d calls", res, err, len(r.calls))
	}
}

func TestCapOutput(t *testing.T) {
	tests := []struct {
		name, stdout, stderr string
		want                 string
	}{
		{"empty", "", "", ""},
		{"stdout only", "a\n", "", "a\n"},
		{"both", "a", "b\n", "a\nb\n"},
		{"stderr only", "", "err", "err"},
		{"invalid utf-8", "a\xffb", "", "a\uFFFDb"},
	}
	for _, tt := range tests {
		if got := capOutput(tt.stdout, tt.stderr); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	long := strings.Repeat("é", MaxCheckOutput) + "TAIL"
	got := capOutput("HEAD"+long, "")
	if !utf8.ValidString(got) || len(got) > MaxCheckOutput+64 || !strings.HasPrefix(got, "HEAD") ||
		!strings.HasSuffix(got, "TAIL") || !strings.Contains(got, "bytes cut …]") {
		t.Errorf("capped output: len %d, valid %v, %q...%q", len(got), utf8.ValidString(got), got[:10], got[len(got)-10:])
	}
}

// localRunner runs commands with the local /bin/sh, to check the exit
// status classification against a real shell. Only harmless commands are
// given to it.
type localRunner struct{}

func (localRunner) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := nightshift.Exec{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return res, ctx.Err()
	case errors.As(err, &ee):
		ws := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			res.Signal = strings.ToUpper(strings.TrimPrefix(ws.Signal().String(), "signal "))
		} else {
			res.ExitCode = ws.ExitStatus()
		}
	default:
		return res, err
	}
	return res, nil
}

func TestShellCheckRealShell(t *testing.T) {
	tests := []struct {
		cmd    string
		status nightshift.CheckStatus
		code   int
	}{
		{"true", nightshift.CheckPass, 0},
		{"grep -q root /etc/passwd", nightshift.CheckPass, 0},
		{"grep -q no-such-user-xyz /etc/passwd", nightshift.CheckFail, 1},
		{"test -e /no/such/file", nightshift.CheckFail, 1},
		{"exit 3", nightshift.CheckFail, 3},
		{"no-such-command-xyz", nightshift.CheckError, 127},
		{"/etc/passwd", nightshift.CheckError, 126},
		{"sh -c 'kill -TERM $$'", nightshift.CheckError, 143},
		{"kill -KILL $$", nightshift.CheckError, -1},
	}
	for _, tt := range tests {
		res, err := Rule{ID: "t", Check: ShellCheck{Command: tt.cmd}}.Evaluate(context.Background(), localRunner{})
		if err != nil || res.Status != tt.status || res.ExitCode != tt.code {
			t.Errorf("%q: %+v, %v; want %v exit %d", tt.cmd, res, err, tt.status, tt.code)
		}
	}
	// A runner stopped by the context reports an error, never a pass.
	ctx, cancel := context.WithCancel(context.Background())
	res, err := ShellCheck{Command: "sleep 30"}.Evaluate(ctx, cancelRunner{cancel})
	if !errors.Is(err, context.Canceled) || res.Status != nightshift.CheckError {
		t.Errorf("cancelled run: %+v, %v", res, err)
	}
}

// cancelRunner cancels the context, then runs the command locally.
type cancelRunner struct{ cancel context.CancelFunc }

func (r cancelRunner) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	r.cancel()
	return localRunner{}.Run(ctx, command)
}
