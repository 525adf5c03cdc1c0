package lockout

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	nightshift "github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// LoginFunc makes one fresh login: a new TCP connection, a new SSH
// handshake and authentication as the worker's own login user, never the
// kept connection, runs command and closes. It returns an error when the
// login or the command could not complete.
type LoginFunc func(ctx context.Context, command string) (nightshift.Exec, error)

// SSHLogin returns a LoginFunc that makes each login with a new
// sshexec.Client built from cfg (one dial, no redials, no keepalives,
// no sudo: the login itself is what is checked).
func SSHLogin(cfg sshexec.Config) LoginFunc {
	cfg.Redial.MaxTries = 1
	cfg.KeepAlive = -1
	cfg.Sudo = false
	return func(ctx context.Context, command string) (nightshift.Exec, error) {
		c, err := sshexec.New(cfg)
		if err != nil {
			return nightshift.Exec{}, err
		}
		defer c.Close()
		return c.Run(ctx, command)
	}
}

// Result is the canary's verdict on one committed change.
type Result struct {
	// Lockouts are the reasons the worker's login is (or will be at
	// sshd's next restart) locked out, each a sentence for the model and
	// the report, for example "would lock out root's SSH login at the
	// next sshd restart: PermitRootLogin no". Empty: the login is safe.
	Lockouts []string
	// Warnings are risks that do not lock this login out (for example a
	// PAM auth stack that denies password logins).
	Warnings []string
	// Skipped are checks that could not run, with why.
	Skipped []string
	// FreshLogin is whether the fresh login ran: false when no LoginFunc
	// is configured.
	FreshLogin bool
	// LoginTook and CheckTook are how long the fresh login and the latent
	// check took (they run concurrently); Took is the whole canary.
	LoginTook, CheckTook, Took time.Duration
}

// OK reports whether no lockout was found.
func (r Result) OK() bool { return len(r.Lockouts) == 0 }

// Reason is the first lockout's reason, or "" when OK.
func (r Result) Reason() string {
	if len(r.Lockouts) == 0 {
		return ""
	}
	return r.Lockouts[0]
}

// Check runs the canary after a committed change: a fresh login (through
// Config.FreshLogin) and, concurrently, the latent-lockout check as one
// script through r, the kept connection: sshd -t; sshd -T -C for the login
// (PermitRootLogin against a root login, Deny/AllowUsers, Deny/AllowGroups,
// AuthenticationMethods, PubkeyAuthentication, the listening ports,
// AuthorizedKeysFile); the account (exists, shell executable and not
// nologin or false, not expired, no forced or expired password, not locked
// where sshd checks the lock); /etc/nologin; sshd's PAM account and session
// stacks run as Linux-PAM runs them (pam_deny, pam_nologin with the file,
// pam_access rules, missing modules); the worker's key in an
// AuthorizedKeysFile readable by the login and, under StrictModes, no
// group- or world-writable or foreign-owned path from it up to the home
// directory.
//
// An error means the canary could not run the latent check (the kept
// connection failed, for example because a firewall change cut it); the
// caller must treat that as a lockout. A fresh login that fails is a
// lockout in the Result, not an error.
func (g *Guard) Check(ctx context.Context, r nightshift.Runner) (Result, error) {
	start := time.Now()
	var res Result
	var wg sync.WaitGroup
	var loginErr error
	if g.cfg.FreshLogin != nil {
		res.FreshLogin = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.Now()
			loginErr = g.login(ctx)
			res.LoginTook = time.Since(t)
		}()
	} else {
		res.Skipped = append(res.Skipped, "fresh login: no LoginFunc configured")
	}
	t := time.Now()
	out, err := run(ctx, r, "check", g.checkCommand())
	res.CheckTook = time.Since(t)
	wg.Wait()
	res.Took = time.Since(start)
	if err == nil {
		err = parseCheck(out, &res)
	}
	// The latent check's reasons name the cause; the failed login comes
	// after them.
	if loginErr != nil {
		res.Lockouts = append(res.Lockouts, g.loginReason(loginErr))
	}
	return res, err
}

// login makes the canary's fresh login, bounded by LoginTimeout, and says
// why it failed (nil: it worked).
func (g *Guard) login(ctx context.Context) error {
	lctx, cancel := context.WithTimeout(ctx, g.cfg.LoginTimeout)
	defer cancel()
	ex, err := g.freshLogin(lctx)
	switch {
	case err != nil:
		return err
	case !ex.Exited() || ex.ExitCode != 0:
		return fmt.Errorf("the command %q ended with exit %d%s: %s", DefaultCommand, ex.ExitCode, signalText(ex), oneLine(ex.Stdout+" "+ex.Stderr))
	case strings.TrimSpace(ex.Stdout) != DefaultCommandOutput:
		return fmt.Errorf("the command %q printed %q", DefaultCommand, oneLine(ex.Stdout))
	}
	return nil
}

// loginReason is the canary's lockout reason for a failed fresh login.
func (g *Guard) loginReason(err error) string {
	return "locked out " + g.cfg.User + "'s SSH login now: a fresh login failed: " + oneLine(err.Error())
}

// freshLogin makes the fresh login, again while the connection is refused
// or cut before authentication within LoginRetry: a reload or restart of
// sshd leaves it without a listener for a moment. A refused
// authentication is final.
func (g *Guard) freshLogin(ctx context.Context) (nightshift.Exec, error) {
	end := time.Now().Add(g.cfg.LoginRetry)
	for {
		ex, err := g.cfg.FreshLogin(ctx, DefaultCommand)
		var op *sshexec.OpError
		if err == nil || !errors.As(err, &op) || (op.Op != sshexec.OpDial && op.Op != sshexec.OpHandshake) || time.Now().After(end) {
			return ex, err
		}
		select {
		case <-ctx.Done():
			return ex, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func signalText(ex nightshift.Exec) string {
	if ex.Signal != "" {
		return " (signal " + ex.Signal + ")"
	}
	return ""
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// checkCommand is the latent check: check.sh with the login's facts in
// its environment.
func (g *Guard) checkCommand() string {
	env := []string{"NS_USER=" + quote(g.cfg.User), "NS_KEY=" + quote(g.key), "NS_ADDR=" + quote(g.cfg.Addr),
		"NS_HOST=" + quote(g.cfg.Host), "NS_LADDR=" + quote(g.cfg.LocalAddr)}
	port := ""
	if g.cfg.LocalPort > 0 {
		port = strconv.Itoa(g.cfg.LocalPort)
	}
	env = append(env, "NS_LPORT="+quote(port))
	return strings.Join(env, " ") + " sh -c " + quote(script("check.sh")) + " sh"
}

// errTruncated: the check's output did not end with its end marker.
var errTruncated = errors.New("lockout: the latent check's output is incomplete")

// parseCheck reads check.sh's lines into res.
func parseCheck(out string, res *Result) error {
	ended := false
	for _, l := range strings.Split(out, "\n") {
		tag, text, _ := strings.Cut(l, "\t")
		switch tag {
		case "L":
			res.Lockouts = append(res.Lockouts, text)
		case "W":
			res.Warnings = append(res.Warnings, text)
		case "S":
			res.Skipped = append(res.Skipped, text)
		case "E":
			ended = true
		case "":
		default:
			return fmt.Errorf("%w: unexpected line %q", errTruncated, oneLine(l))
		}
	}
	if !ended {
		return fmt.Errorf("%w: %q", errTruncated, oneLine(out))
	}
	return nil
}
