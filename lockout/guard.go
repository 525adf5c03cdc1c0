package lockout

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	nightshift "github.com/nightshift-dev/nightshift"
)

// Defaults applied by New to zero-valued Config fields.
const (
	// DefaultDir is where everything the package writes on a host lives:
	// DefaultDir/snap/ID (snapshots) and DefaultDir/switch/ID (switches).
	// A login that is not root writes under
	// ~/.local/state/nightshift/lockout instead.
	DefaultDir = "/var/lib/nightshift/lockout"
	// DefaultDeadline is how long an armed switch waits for Disarm.
	DefaultDeadline = 60 * time.Second
	// DefaultLoginTimeout bounds the canary's fresh login.
	DefaultLoginTimeout = 10 * time.Second
	// DefaultLoginRetry is how long a refused connection is retried.
	DefaultLoginRetry = 2 * time.Second
	// DefaultCommand is the canary's trivial command; its output must be
	// DefaultCommandOutput.
	DefaultCommand       = "echo nightshift-canary"
	DefaultCommandOutput = "nightshift-canary"
)

// Errors of the package, matched with errors.Is.
var (
	// ErrConfig: a Config or option is invalid.
	ErrConfig = errors.New("lockout: invalid configuration")
	// ErrHost: a script on the host failed or printed what it must not;
	// the *HostError says which and how.
	ErrHost = errors.New("lockout: host script failed")
	// ErrArmed: another switch is still armed on the host (*ArmedError).
	ErrArmed = errors.New("lockout: another switch is armed on the host")
	// ErrFired: the switch fired before Disarm; the commit it guarded was
	// undone on the host.
	ErrFired = errors.New("lockout: the switch fired before it was disarmed")
	// ErrUnknownSwitch: no switch with that ID was armed on the host.
	ErrUnknownSwitch = errors.New("lockout: no such switch on the host")
	// ErrLockedOut: the worker's login failed whatever the change being
	// judged did (a *LockedOutError says when and why): the host was
	// locked out before it, or stays locked out after its undo. The host
	// needs a person: no further command may run on it.
	ErrLockedOut = errors.New("lockout: the host's login fails whatever this change did")
	// ErrLost: the net could not bring the host back (the switch did not
	// restore access by its deadline); the host is lost until a person
	// restores it.
	ErrLost = errors.New("lockout: the host is lost")
)

// LockedOutError is a login that failed independently of the change being
// judged.
type LockedOutError struct {
	User string
	// Before: the fresh login failed before the change was committed
	// (nothing was committed). Otherwise it still failed after the change
	// was undone.
	Before bool
	// Reason is the failure, as the canary words it.
	Reason string
}

func (e *LockedOutError) Error() string {
	if e.Before {
		return fmt.Sprintf("lockout: %s's SSH login already failed before this command, so the host was locked out by an earlier change or from outside; nothing was committed and no further command runs on this host until a person restores access: %s", e.User, e.Reason)
	}
	return fmt.Sprintf("lockout: %s's SSH login still fails after this command was undone, so the host is locked out by something else (an earlier change made live by sshd's restart, or from outside); no further command runs on this host until a person restores access: %s", e.User, e.Reason)
}

// Unwrap makes errors.Is(err, ErrLockedOut) hold.
func (e *LockedOutError) Unwrap() error { return ErrLockedOut }

// HostError is a script that failed on the host.
type HostError struct {
	Op     string // "snapshot", "restore", "arm", "disarm", "check", "state"
	Exit   int
	Output string // stdout and stderr, cut
}

func (e *HostError) Error() string {
	return fmt.Sprintf("lockout: %s on the host: exit %d: %s", e.Op, e.Exit, e.Output)
}

// Unwrap makes errors.Is(err, ErrHost) hold.
func (e *HostError) Unwrap() error { return ErrHost }

// ArmedError names the switch that is still armed.
type ArmedError struct{ ID string }

func (e *ArmedError) Error() string {
	return fmt.Sprintf("lockout: switch %s is still armed on the host; disarm it or let it fire first", e.ID)
}

// Unwrap makes errors.Is(err, ErrArmed) hold.
func (e *ArmedError) Unwrap() error { return ErrArmed }

// Config configures a Guard. Zero values are defaulted by New.
type Config struct {
	// User is the worker's own login user on the host (required): whose
	// home and ~/.ssh are snapshotted and whose login the canary checks.
	User string
	// Key is the worker's public key; the canary checks that it is in one
	// of the login's AuthorizedKeysFile files. Nil: any non-empty file
	// passes.
	Key ssh.PublicKey
	// Addr, Host, LocalAddr and LocalPort are how sshd sees the worker's
	// connection, for sshd -T -C (Match blocks). Empty: taken on the host
	// from SSH_CONNECTION (absent under sudo, when they are then left out).
	Addr, Host, LocalAddr string
	LocalPort             int
	// Dir is where snapshots and switches live on the host; default
	// DefaultDir. Must be an absolute path of plain characters.
	Dir string
	// Deadline is how long an armed switch waits; default DefaultDeadline.
	Deadline time.Duration
	// FreshLogin makes the canary's fresh login (see SSHLogin). Nil: the
	// canary runs the latent check only and says so in Result.Skipped.
	FreshLogin LoginFunc
	// LoginTimeout bounds the fresh login; default DefaultLoginTimeout.
	LoginTimeout time.Duration
	// LoginRetry is how long the fresh login is tried again while the
	// connection is refused or cut before authentication (sshd without a
	// listener for a moment after a reload or restart); default
	// DefaultLoginRetry. Refused authentication is never retried.
	LoginRetry time.Duration
}

// Guard is the lockout net for one login on one host: snapshots, the
// dead-man switch and the canary. It holds no connection; every method
// takes the Runner of the worker's kept connection. A Guard is safe for
// concurrent use; the host-side state it manages is not (one switch per
// host at a time, see Arm).
type Guard struct {
	cfg Config
	key string
}

var plainPath = regexp.MustCompile(`^/[A-Za-z0-9._/-]+$`)
var plainID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
var plainUser = regexp.MustCompile(`^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}\$?$`)

// New checks cfg and applies its defaults.
func New(cfg Config) (*Guard, error) {
	if cfg.User == "" {
		return nil, fmt.Errorf("%w: User is empty", ErrConfig)
	}
	if !plainUser.MatchString(cfg.User) {
		return nil, fmt.Errorf("%w: User %q is not a plain login name", ErrConfig, cfg.User)
	}
	if cfg.Dir == "" {
		cfg.Dir = DefaultDir
	}
	if !plainPath.MatchString(cfg.Dir) || strings.Contains(cfg.Dir, "..") || path.Clean(cfg.Dir) == "/" {
		return nil, fmt.Errorf("%w: Dir %q is not an absolute path of plain characters below /", ErrConfig, cfg.Dir)
	}
	cfg.Dir = path.Clean(cfg.Dir)
	if cfg.Deadline == 0 {
		cfg.Deadline = DefaultDeadline
	}
	if cfg.Deadline < 100*time.Millisecond {
		return nil, fmt.Errorf("%w: Deadline %v is below 100ms", ErrConfig, cfg.Deadline)
	}
	if cfg.LoginTimeout <= 0 {
		cfg.LoginTimeout = DefaultLoginTimeout
	}
	if cfg.LoginRetry <= 0 {
		cfg.LoginRetry = DefaultLoginRetry
	}
	if cfg.LocalPort < 0 || cfg.LocalPort > 65535 {
		return nil, fmt.Errorf("%w: LocalPort %d out of range", ErrConfig, cfg.LocalPort)
	}
	for name, v := range map[string]string{"Addr": cfg.Addr, "Host": cfg.Host, "LocalAddr": cfg.LocalAddr} {
		if strings.ContainsAny(v, ", \t\r\n'\"=") {
			return nil, fmt.Errorf("%w: %s %q contains a separator sshd -C cannot take", ErrConfig, name, v)
		}
	}
	g := &Guard{cfg: cfg}
	if cfg.Key != nil {
		g.key = base64.StdEncoding.EncodeToString(cfg.Key.Marshal())
	}
	return g, nil
}

// Config returns the Guard's configuration with defaults applied.
func (g *Guard) Config() Config { return g.cfg }

//go:embed scripts/*.sh
var scripts embed.FS

func script(name string) string {
	b, err := scripts.ReadFile("scripts/" + name)
	if err != nil {
		panic("lockout: embedded script missing: " + name) // a build defect, not input
	}
	return string(b)
}

// quote returns s as one single-quoted shell word.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// baseExpr is the shell expression of the host directory: Dir as root,
// ~/.local/state/nightshift/lockout otherwise.
func (g *Guard) baseExpr() string {
	return `$( [ "$(id -u)" = 0 ] && printf %s ` + quote(g.cfg.Dir) + ` || printf %s "$HOME/.local/state/nightshift/lockout" )`
}

// newID returns a fresh switch or snapshot ID: the time and random bits.
func newID() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("lockout: crypto/rand: " + err.Error()) // never fails on Linux
	}
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// run runs command and returns its stdout, or a *HostError when it did not
// exit 0.
func run(ctx context.Context, r nightshift.Runner, op, command string) (string, error) {
	ex, err := r.Run(ctx, command)
	if err != nil {
		return "", fmt.Errorf("lockout: %s: %w", op, err)
	}
	if !ex.Exited() || ex.ExitCode != 0 {
		out := strings.TrimSpace(ex.Stdout + "\n" + ex.Stderr)
		if len(out) > 2000 {
			out = out[len(out)-2000:]
		}
		return ex.Stdout, &HostError{Op: op, Exit: ex.ExitCode, Output: out}
	}
	return ex.Stdout, nil
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
