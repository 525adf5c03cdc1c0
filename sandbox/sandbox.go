package sandbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/hostfile"
)

//go:embed helper.sh
var helperScript string

// Errors.
var (
	// ErrUnavailable: the sandbox cannot run on this host (an
	// *UnavailableError names the missing pieces).
	ErrUnavailable = errors.New("sandbox unavailable")
	// ErrReport: the helper's report could not be read (the host's
	// answer was cut or malformed).
	ErrReport = errors.New("bad sandbox report")
	// ErrHelper: the helper failed on the host (mounts, a missing trial).
	ErrHelper = errors.New("sandbox helper failed")
	// ErrConflict: a path changed on the host between the sandbox run and
	// the commit (or, for Undo, after the commit); nothing was changed.
	ErrConflict = errors.New("host changed since the sandbox run")
	// ErrUndone: Undo of a trial that was undone already.
	ErrUndone = errors.New("trial already undone")
)

// UnavailableError says why the sandbox cannot run on a host.
type UnavailableError struct {
	Missing []string
}

func (e *UnavailableError) Error() string {
	return "sandbox unavailable on the host: " + strings.Join(e.Missing, "; ")
}

// Is matches ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Conflict is one path whose state is not what a commit or an undo expected.
type Conflict struct {
	Path string
	// Want and Got are states in the helper's form: "-" absent, "d" a
	// directory, "l:TARGET" a symlink, a sha256 for a regular file;
	// Got "sockets" for a /run tree deleted in the trial that holds
	// sockets or FIFOs on the host (the trial's copy had none).
	Want, Got string
}

// ConflictError lists the paths that stopped a commit or an undo.
type ConflictError struct {
	Op        string // "commit" or "undo"
	Conflicts []Conflict
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s stopped: %d path(s) changed on the host", e.Op, len(e.Conflicts))
	for i, c := range e.Conflicts {
		if i == 5 {
			fmt.Fprintf(&b, "; …")
			break
		}
		fmt.Fprintf(&b, "; %s (%s)", c.Path, describe(c.Got, c.Want))
	}
	return b.String()
}

// Is matches ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

func describe(got, want string) string {
	switch {
	case got == "-":
		return "now absent"
	case got == "sockets":
		return "holds sockets or FIFOs the trial's copy of /run did not have"
	case want == "-":
		return "now present"
	default:
		return "contents differ"
	}
}

// Defaults applied by New.
const (
	DefaultTimeout   = 10 * time.Minute
	DefaultOutputCap = 256 << 10
	DefaultDir       = "/var/lib/nightshift"
	// MaxReport bounds the report read back from the host.
	MaxReport = 64 << 20
)

// Config configures a Sandbox. The zero value of every field selects its
// default.
type Config struct {
	// Timeout bounds one command inside the sandbox; past it the command's
	// processes are killed and the trial is discarded. Default
	// DefaultTimeout (10 min). The Runner's own timeout must be longer.
	Timeout time.Duration
	// OutputCap caps each of the command's stdout and stderr kept in the
	// report. Default DefaultOutputCap (256 KiB).
	OutputCap int
	// Dir is where the helper is installed on the host; pre-images are in
	// /var/lib/nightshift/undo whatever Dir is. Default DefaultDir.
	Dir string
	// NewID returns a new trial ID; nil means 16 random hex digits.
	NewID func() string
	// LayerSize bounds, in bytes, the memory-backed file system holding one
	// trial's copy-on-write layers and output: a command that writes more
	// fails there (ENOSPC) instead of filling the host's memory. Zero means
	// half the host's memory (tmpfs's default), per trial.
	LayerSize int64
	// Login is the worker's login user, for whom the helper evaluates
	// sshd's effective configuration and the PAM stacks a login goes
	// through. Empty means the user whose sudo runs the helper
	// (SUDO_USER), or else the user it runs as.
	Login string
}

// Sandbox runs commands in a throwaway recording sandbox on the host its
// Runner reaches, and applies or undoes their effects. It is safe for
// concurrent use when the Runner is; trials are independent, but commits
// of trials that touch the same paths conflict (ErrConflict) rather than
// overwrite each other.
type Sandbox struct {
	r      nightshift.Runner
	cfg    Config
	helper string // path on the host

	mu        sync.Mutex
	installed bool
}

// New returns a Sandbox that runs its helper through r.
func New(r nightshift.Runner, cfg Config) *Sandbox {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.OutputCap <= 0 {
		cfg.OutputCap = DefaultOutputCap
	}
	if cfg.Dir == "" {
		cfg.Dir = DefaultDir
	}
	if cfg.NewID == nil {
		cfg.NewID = func() string {
			var b [8]byte
			_, _ = rand.Read(b[:])
			return hex.EncodeToString(b[:])
		}
	}
	sum := sha256.Sum256([]byte(helperScript))
	return &Sandbox{r: r, cfg: cfg, helper: cfg.Dir + "/sandbox-" + hex.EncodeToString(sum[:6]) + ".sh"}
}

// install writes the helper to the host once (content-addressed, so an
// older worker's helper never runs a newer protocol).
func (s *Sandbox) install(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.installed {
		return nil
	}
	enc := base64.StdEncoding.EncodeToString([]byte(helperScript))
	var b strings.Builder
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	b.WriteString(enc + "\n")
	q := quote(s.helper)
	cmd := "umask 077; mkdir -p " + quote(s.cfg.Dir) + " && if [ ! -s " + q + " ]; then base64 -d > " + q + ".tmp <<'NIGHTSHIFT_HELPER'\n" +
		b.String() + "NIGHTSHIFT_HELPER\nmv -f " + q + ".tmp " + q + "; fi"
	ex, err := s.r.Run(ctx, cmd)
	if err != nil {
		return fmt.Errorf("install the sandbox helper: %w", err)
	}
	if ex.ExitCode != 0 {
		return &UnavailableError{Missing: []string{"cannot install the helper in " + s.cfg.Dir + ": " + firstLine(ex.Stderr)}}
	}
	s.installed = true
	return nil
}

// Probe checks that the sandbox can run on the host: Linux, root, the
// util-linux tools, and overlayfs in a new mount namespace. It returns an
// *UnavailableError naming every missing piece, or a transport error.
func (s *Sandbox) Probe(ctx context.Context) error {
	ex, err := s.r.Run(ctx, "uname -s; id -u")
	if err != nil {
		return fmt.Errorf("probe the sandbox: %w", err)
	}
	lines := strings.Fields(ex.Stdout)
	if len(lines) == 2 && lines[0] != "Linux" {
		return &UnavailableError{Missing: []string{"not Linux: " + lines[0]}}
	}
	if len(lines) == 2 && lines[1] != "0" {
		return &UnavailableError{Missing: []string{"the login is not root (uid " + lines[1] + ") and cannot become root"}}
	}
	if err := s.install(ctx); err != nil {
		return err
	}
	ex, err = s.r.Run(ctx, "bash "+quote(s.helper)+" probe")
	if err != nil {
		return fmt.Errorf("probe the sandbox: %w", err)
	}
	out := strings.TrimSpace(ex.Stdout)
	if ex.ExitCode == 0 && out == "ok" {
		return nil
	}
	missing := strings.Split(out, "\n")
	if out == "" {
		missing = []string{fmt.Sprintf("the probe failed (exit %d): %s", ex.ExitCode, firstLine(ex.Stderr))}
	}
	return &UnavailableError{Missing: missing}
}

// Trial is one command run in the sandbox: what it printed and what it
// did. Nothing of it is on the host's real file systems until Commit.
type Trial struct {
	ID      string
	Exec    nightshift.Exec
	Effects nightshift.Effects
	// Duration is the whole round trip: setup, command, gathering.
	Duration time.Duration
	ops      []op
}

// Try runs command in a new sandbox on the host and returns what it did.
// The trial's layers stay on the host (in a tmpfs under
// /run/nightshift/sandbox) until Commit or Discard; the helper drops
// layers left for more than six hours. A transport error means the
// outcome is unknown; an *UnavailableError or ErrHelper that the sandbox
// could not be built (nothing ran).
func (s *Sandbox) Try(ctx context.Context, command string) (*Trial, error) {
	if err := s.install(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	id := s.cfg.NewID()
	secs := int(s.cfg.Timeout.Round(time.Second) / time.Second)
	enc := base64.StdEncoding.EncodeToString([]byte(command))
	var b strings.Builder
	if s.cfg.LayerSize > 0 {
		fmt.Fprintf(&b, "NIGHTSHIFT_TMPFS_SIZE=%d ", s.cfg.LayerSize)
	}
	if s.cfg.Login != "" {
		fmt.Fprintf(&b, "NIGHTSHIFT_LOGIN=%s ", quote(s.cfg.Login))
	}
	fmt.Fprintf(&b, "NIGHTSHIFT_OUTCAP=%d bash %s try %s %d <<'NIGHTSHIFT_COMMAND'\n", s.cfg.OutputCap, quote(s.helper), id, max(secs, 1))
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	b.WriteString(enc + "\nNIGHTSHIFT_COMMAND")
	// The helper bounds the trial by the timeout (the command, the facts
	// and the gathering, each Timeout; see TryBound); this bounds the round
	// trip as well, should the host not answer.
	rctx, cancel := context.WithTimeout(ctx, s.TryBound())
	defer cancel()
	ex, err := s.r.Run(rctx, b.String())
	if ctx.Err() == nil && (rctx.Err() != nil || ex.TimedOut) {
		// Past the bound: the helper did not end the trial itself. Drop
		// its layers (nothing of it reached the host's files).
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		_ = s.Discard(dctx, &Trial{ID: id})
		dcancel()
		return nil, fmt.Errorf("%w: the trial did not end within %v (the sandbox's timeout is %v): %v", ErrHelper, s.TryBound(), s.cfg.Timeout, err)
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // ended by ctx: the command was interrupted
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox try: %w", err)
	}
	if ex.ExitCode != 0 {
		return nil, fmt.Errorf("%w: try exit %d: %s", ErrHelper, ex.ExitCode, firstLine(ex.Stderr))
	}
	raw := []byte(ex.Stdout)
	if ex.StdoutCut > 0 {
		// The report outgrew the runner's output cap: read its file.
		if raw, err = hostfile.Read(ctx, s.r, "/run/nightshift/sandbox/"+id+"/report", MaxReport); err != nil {
			return nil, fmt.Errorf("sandbox try: %w", err)
		}
	}
	rep, err := parseReport(raw)
	if err != nil {
		return nil, err
	}
	t := &Trial{ID: id}
	if t.Exec, err = rep.exec(); err != nil {
		return nil, err
	}
	if t.Effects, t.ops, err = rep.effects(); err != nil {
		return nil, err
	}
	if log := strings.TrimSpace(string(rep.sections["log"])); log != "" && strings.Contains(log, "nightshift-sandbox:") {
		return nil, fmt.Errorf("%w: %s", ErrHelper, firstLine(log))
	}
	t.Duration = time.Since(start)
	t.Exec.Duration = t.Duration
	return t, nil
}

// TryBound is the longest one Try may take: three times Config.Timeout
// (the command, the facts read for the judge and the gathering of its
// effects are each bounded by it on the host) and a minute for the mounts
// and the round trip. Try ends its trial with ErrHelper past it, whatever
// the host does; ctx bounds it too.
func (s *Sandbox) TryBound() time.Duration { return 3*s.cfg.Timeout + time.Minute }

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "no error message"
	}
	line, _, _ := strings.Cut(s, "\n")
	return clip(line, 300)
}
