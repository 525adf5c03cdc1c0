package sshexec

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift/retry"
)

// Defaults applied by New to zero-valued Config fields (but
// DefaultCommandTimeout, the CLI's --command-timeout default: a zero
// CommandTimeout is none).
const (
	DefaultPort           = 22
	DefaultDialTimeout    = 15 * time.Second
	DefaultCommandTimeout = 10 * time.Minute
	DefaultKillGrace      = 2 * time.Second
	DefaultOutputCap      = 1 << 20 // bytes per stream
	DefaultKeepAlive      = 15 * time.Second
	DefaultKeepAliveMax   = 3
	DefaultPassphraseEnv  = "NIGHTSHIFT_SSH_PASSPHRASE"
	DefaultMaxSessions    = 10 // OpenSSH's MaxSessions default
)

// Config describes one target host and how to reach it. Every zero value
// means the documented default, applied by New; New does not modify the
// caller's Config.
//
// A Config holds no secrets in readable form: key material lives in files,
// the agent or Signers, and passphrases come from the environment or a
// prompt at New time and are discarded after decrypting. Its String,
// Format, MarshalJSON and LogValue methods never print key material.
type Config struct {
	// Host is the host name or IP address. Required.
	Host string
	// Port defaults to 22.
	Port int
	// User defaults to the current user's name.
	User string

	// IdentityFiles are private key files (OpenSSH or PEM format, ed25519,
	// rsa or ecdsa). Default: whichever of ~/.ssh/id_ed25519,
	// ~/.ssh/id_ecdsa and ~/.ssh/id_rsa exist. Explicitly listed files must
	// exist. A certificate at FILE-cert.pub is used alongside its key, as
	// OpenSSH does.
	IdentityFiles []string
	// CertificateFiles are extra OpenSSH user certificates; each is paired
	// with the identity whose public key it certifies.
	CertificateFiles []string
	// Signers are in-memory keys, offered before the identity files.
	Signers []ssh.Signer
	// NoAgent disables ssh-agent. By default the agent at AgentSocket is
	// used when reachable.
	NoAgent bool
	// AgentSocket defaults to $SSH_AUTH_SOCK.
	AgentSocket string
	// PassphraseEnv names the environment variable holding the passphrase
	// of encrypted identity files. Default: NIGHTSHIFT_SSH_PASSPHRASE.
	// Passphrases are never accepted as flags or Config values.
	PassphraseEnv string
	// Passphrase, when the environment variable is unset, is asked for the
	// passphrase of an encrypted identity file; see TerminalPassphrase.
	// Nil means encrypted keys fail with ErrPassphraseRequired.
	Passphrase func(keyFile string) ([]byte, error)

	// KnownHostsFiles default to ~/.ssh/known_hosts. Missing files count
	// as empty. Accepted new keys are appended to the first one.
	KnownHostsFiles []string
	// AcceptNewHostKey trusts a host on first use: when no key at all is
	// known for the host, its key is appended to the first known_hosts
	// file. A changed key is still refused.
	AcceptNewHostKey bool
	// InsecureSkipHostKeyVerification accepts any host key. It defeats
	// SSH's protection against man-in-the-middle attacks.
	InsecureSkipHostKeyVerification bool

	// ProxyJump is a jump host, "[user@]host[:port]", reached with the
	// same credentials and known_hosts files (like ssh -J). Default: none.
	ProxyJump string
	// Sudo runs each command as `sudo -n -- sh -c COMMAND` when User is not
	// root. sudo must not need a password (-n fails instead of prompting).
	Sudo bool

	// DialTimeout bounds the TCP connection plus SSH handshake and
	// authentication, and then each session open on the connection (a
	// connection that does not answer one in time is closed and, nothing
	// having been sent, redialled once). Default: 15s.
	DialTimeout time.Duration
	// CommandTimeout bounds each Run; on expiry the command is signalled
	// and Exec.TimedOut is set. Zero means no limit other than the
	// context's, as the CLI's --command-timeout 0 does (the CLI passes its
	// flag here unchanged); DefaultCommandTimeout (10 minutes) is the
	// CLI's default. Negative is refused.
	CommandTimeout time.Duration
	// KillGrace is how long a timed-out or cancelled command has between
	// SIGTERM and SIGKILL, and then how long the server has to close the
	// channel before the connection is torn down. Default: 2s.
	KillGrace time.Duration
	// OutputCap caps each of stdout and stderr, keeping the first and the
	// last OutputCap/2 bytes. Default: 1 MiB.
	OutputCap int
	// MaxSessions caps concurrent Runs on the connection; further Runs wait
	// for a free session. Default: 10, OpenSSH's MaxSessions default.
	MaxSessions int
	// KeepAlive is the interval between keepalive@openssh.com requests.
	// Default: 15s; negative disables keepalives.
	KeepAlive time.Duration
	// KeepAliveMax unanswered keepalive intervals close the connection
	// (like ServerAliveCountMax). Default: 3.
	KeepAliveMax int
	// Redial paces the dials of a Run when there is no live connection:
	// the first dial is immediate, each retry waits Redial.Delay of the
	// consecutive failures so far. A Client remembers consecutive failures,
	// so the next Run also waits before redialling a host that just failed.
	// Only network and handshake failures are retried; host key,
	// authentication and configuration failures are not. Defaults:
	// BaseDelay 250ms, MaxDelay 8s, MaxTries 4 per Run, no jitter, no
	// deadline. The Client supplies CheckRetry, OnRetry and Sleep (which
	// Close interrupts); values set there are replaced.
	Redial retry.Policy
	// ReconnectDeadline is how long a host that has answered may stay
	// unreachable. Once the client has been connected, a connection that
	// broke is redialled with Redial's backoff (its MaxTries does not
	// apply) until ReconnectDeadline has passed since the first failed
	// redial; only then does a Run fail. It bounds an SSH outage (sshd
	// restarted, a reboot, a network blip) as the model server's retry
	// deadline bounds the server's. A host that never answered is dialled
	// under Redial alone. Zero means none: a broken connection is
	// redialled under Redial alone, as for the first connection, as the
	// CLI's --host-reconnect-deadline 0 does (the CLI passes its flag here
	// unchanged); DefaultReconnectDeadline (10 minutes) is the CLI's
	// default. Negative is refused.
	ReconnectDeadline time.Duration

	// Logger receives connection events (dials, redials, accepted host
	// keys, keepalive failures) — never commands, output or secrets.
	// Default: discard.
	Logger *slog.Logger
	// OnDialFailure, when set, is called once per failed dial that is
	// retried and once when the dials give up (see DialFailure), from the
	// goroutine that dials; it must return quickly. The Logger then gets
	// those failures at Info rather than Warn. Default: nil.
	OnDialFailure func(DialFailure)
}

// Redial defaults: the first redial waits 250ms, each further one twice as
// long up to 8s, and one Run dials at most 4 times.
const (
	DefaultRedialBaseDelay = 250 * time.Millisecond
	DefaultRedialMaxDelay  = 8 * time.Second
	DefaultRedialTries     = 4
	// DefaultReconnectDeadline is the CLI's --host-reconnect-deadline
	// default, the same as the worker's model-server retry deadline.
	DefaultReconnectDeadline = 10 * time.Minute
)

// redialDefaults fills the zero fields of p with the redial defaults.
func redialDefaults(p retry.Policy) retry.Policy {
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultRedialBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultRedialMaxDelay
	}
	p.MaxDelay = max(p.MaxDelay, p.BaseDelay)
	if p.MaxTries <= 0 {
		p.MaxTries = DefaultRedialTries
	}
	return p
}

// withDefaults returns a copy with every default applied, or an error
// naming the first invalid field.
func (c Config) withDefaults() (Config, error) {
	if c.Host == "" {
		return c, fmt.Errorf("host is empty")
	}
	if strings.ContainsAny(c.Host, " \t\r\n@/[]") {
		return c, fmt.Errorf("host %q contains a character not allowed in a host name", c.Host)
	}
	if strings.Contains(c.Host, ":") && net.ParseIP(c.Host) == nil {
		return c, fmt.Errorf("host %q: give the port in Port, not in Host", c.Host)
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Port < 0 || c.Port > 65535 {
		return c, fmt.Errorf("port %d out of range", c.Port)
	}
	if c.User == "" {
		u, err := user.Current()
		if err != nil {
			return c, fmt.Errorf("user is empty and the current user is unknown: %w", err)
		}
		c.User = u.Username
	}
	if c.PassphraseEnv == "" {
		c.PassphraseEnv = DefaultPassphraseEnv
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.CommandTimeout < 0 {
		return c, fmt.Errorf("command timeout %v is negative (0 means none)", c.CommandTimeout)
	}
	if c.ReconnectDeadline < 0 {
		return c, fmt.Errorf("reconnect deadline %v is negative (0 means none)", c.ReconnectDeadline)
	}
	if c.KillGrace <= 0 {
		c.KillGrace = DefaultKillGrace
	}
	if c.OutputCap <= 0 {
		c.OutputCap = DefaultOutputCap
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = DefaultKeepAlive
	}
	if c.KeepAliveMax <= 0 {
		c.KeepAliveMax = DefaultKeepAliveMax
	}
	c.Redial = redialDefaults(c.Redial)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ProxyJump != "" {
		if _, err := ParseDestination(c.ProxyJump); err != nil {
			return c, fmt.Errorf("proxy jump: %w", err)
		}
	}
	return c, nil
}

// addr is the host:port dialled.
func (c *Config) addr() string {
	return net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
}

// redacted is the printable view of a Config.
type redacted struct {
	Host                            string   `json:"host"`
	Port                            int      `json:"port,omitempty"`
	User                            string   `json:"user,omitempty"`
	IdentityFiles                   []string `json:"identity_files,omitempty"`
	CertificateFiles                []string `json:"certificate_files,omitempty"`
	Signers                         int      `json:"signers,omitempty"`
	NoAgent                         bool     `json:"no_agent,omitempty"`
	AgentSocket                     string   `json:"agent_socket,omitempty"`
	PassphraseEnv                   string   `json:"passphrase_env,omitempty"`
	PassphrasePrompt                bool     `json:"passphrase_prompt,omitempty"`
	KnownHostsFiles                 []string `json:"known_hosts_files,omitempty"`
	AcceptNewHostKey                bool     `json:"accept_new_host_key,omitempty"`
	InsecureSkipHostKeyVerification bool     `json:"insecure_skip_host_key_verification,omitempty"`
	ProxyJump                       string   `json:"proxy_jump,omitempty"`
	Sudo                            bool     `json:"sudo,omitempty"`
	DialTimeout                     string   `json:"dial_timeout,omitempty"`
	CommandTimeout                  string   `json:"command_timeout,omitempty"`
	OutputCap                       int      `json:"output_cap,omitempty"`
}

func (c Config) redact() redacted {
	r := redacted{
		Host: c.Host, Port: c.Port, User: c.User,
		IdentityFiles: c.IdentityFiles, CertificateFiles: c.CertificateFiles,
		Signers: len(c.Signers), NoAgent: c.NoAgent, AgentSocket: c.AgentSocket,
		PassphraseEnv: c.PassphraseEnv, PassphrasePrompt: c.Passphrase != nil,
		KnownHostsFiles: c.KnownHostsFiles, AcceptNewHostKey: c.AcceptNewHostKey,
		InsecureSkipHostKeyVerification: c.InsecureSkipHostKeyVerification,
		ProxyJump:                       c.ProxyJump, Sudo: c.Sudo, OutputCap: c.OutputCap,
	}
	if c.DialTimeout != 0 {
		r.DialTimeout = c.DialTimeout.String()
	}
	if c.CommandTimeout != 0 {
		r.CommandTimeout = c.CommandTimeout.String()
	}
	return r
}

// String describes the Config without key material: signers are counted,
// the passphrase prompt is reported as present or not, and the passphrase
// environment variable is named but never read.
func (c Config) String() string {
	r := c.redact()
	var b strings.Builder
	fmt.Fprintf(&b, "sshexec.Config{Host:%q Port:%d User:%q", r.Host, r.Port, r.User)
	if len(r.IdentityFiles) > 0 {
		fmt.Fprintf(&b, " IdentityFiles:%q", r.IdentityFiles)
	}
	if len(r.CertificateFiles) > 0 {
		fmt.Fprintf(&b, " CertificateFiles:%q", r.CertificateFiles)
	}
	if r.Signers > 0 {
		fmt.Fprintf(&b, " Signers:%d(redacted)", r.Signers)
	}
	if r.NoAgent {
		b.WriteString(" NoAgent")
	} else if r.AgentSocket != "" {
		fmt.Fprintf(&b, " AgentSocket:%q", r.AgentSocket)
	}
	if r.PassphraseEnv != "" {
		fmt.Fprintf(&b, " PassphraseEnv:%q", r.PassphraseEnv)
	}
	if r.PassphrasePrompt {
		b.WriteString(" Passphrase:prompt")
	}
	if len(r.KnownHostsFiles) > 0 {
		fmt.Fprintf(&b, " KnownHostsFiles:%q", r.KnownHostsFiles)
	}
	if r.AcceptNewHostKey {
		b.WriteString(" AcceptNewHostKey")
	}
	if r.InsecureSkipHostKeyVerification {
		b.WriteString(" InsecureSkipHostKeyVerification")
	}
	if r.ProxyJump != "" {
		fmt.Fprintf(&b, " ProxyJump:%q", r.ProxyJump)
	}
	if r.Sudo {
		b.WriteString(" Sudo")
	}
	if r.DialTimeout != "" {
		fmt.Fprintf(&b, " DialTimeout:%s", r.DialTimeout)
	}
	if r.CommandTimeout != "" {
		fmt.Fprintf(&b, " CommandTimeout:%s", r.CommandTimeout)
	}
	if r.OutputCap != 0 {
		fmt.Fprintf(&b, " OutputCap:%d", r.OutputCap)
	}
	b.WriteString("}")
	return b.String()
}

// GoString is String, so %#v cannot reach the signers either.
func (c Config) GoString() string { return c.String() }

// Format prints String for every verb, so no verb (%d, %x, %+v…) can walk
// into the signers' private keys.
func (c Config) Format(f fmt.State, verb rune) {
	s := c.String()
	if verb == 'q' {
		s = strconv.Quote(s)
	}
	f.Write([]byte(s))
}

// MarshalJSON encodes the redacted view.
func (c Config) MarshalJSON() ([]byte, error) { return json.Marshal(c.redact()) }

// LogValue makes slog print the redacted view.
func (c Config) LogValue() slog.Value {
	r := c.redact()
	return slog.GroupValue(
		slog.String("host", r.Host), slog.Int("port", r.Port), slog.String("user", r.User),
		slog.Any("identity_files", r.IdentityFiles), slog.Int("signers", r.Signers),
		slog.Bool("agent", !r.NoAgent), slog.String("proxy_jump", r.ProxyJump),
		slog.Bool("accept_new_host_key", r.AcceptNewHostKey),
		slog.Bool("insecure_skip_host_key_verification", r.InsecureSkipHostKeyVerification),
	)
}

// Destination is a parsed "[user@]host[:port]".
type Destination struct {
	User string // "" when absent
	Host string
	Port int // 0 when absent
}

// ParseDestination parses "[user@]host[:port]" as ssh -J accepts it; an
// IPv6 address with a port is written "[::1]:22". It rejects empty parts,
// bad ports and characters that have no place in a host name.
func ParseDestination(s string) (Destination, error) {
	var d Destination
	if s == "" {
		return d, fmt.Errorf("destination is empty")
	}
	if strings.ContainsAny(s, " \t\r\n/,") {
		return d, fmt.Errorf("destination %q contains a space, slash or comma", s)
	}
	rest := s
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		d.User, rest = rest[:i], rest[i+1:]
		if d.User == "" {
			return d, fmt.Errorf("destination %q has an empty user", s)
		}
		if strings.ContainsAny(d.User, "@:") {
			return d, fmt.Errorf("destination %q has a malformed user", s)
		}
	}
	host := rest
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return d, fmt.Errorf("destination %q has an unclosed '['", s)
		}
		host = rest[1:end]
		after := rest[end+1:]
		switch {
		case after == "":
		case strings.HasPrefix(after, ":"):
			p, err := parsePort(after[1:])
			if err != nil {
				return d, fmt.Errorf("destination %q: %w", s, err)
			}
			d.Port = p
		default:
			return d, fmt.Errorf("destination %q has text after ']'", s)
		}
	} else if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		if strings.Count(rest, ":") > 1 {
			// A bare IPv6 address, no port.
			if net.ParseIP(rest) == nil {
				return d, fmt.Errorf("destination %q: write an IPv6 address with a port as [addr]:port", s)
			}
		} else {
			host = rest[:i]
			p, err := parsePort(rest[i+1:])
			if err != nil {
				return d, fmt.Errorf("destination %q: %w", s, err)
			}
			d.Port = p
		}
	}
	if host == "" {
		return d, fmt.Errorf("destination %q has an empty host", s)
	}
	if strings.ContainsAny(host, "[]@") {
		return d, fmt.Errorf("destination %q has a malformed host", s)
	}
	d.Host = host
	return d, nil
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return p, nil
}

// homeFile is ~/.ssh/name for the current user, or "" when unknown.
func homeFile(name string) string {
	u, err := user.Current()
	if err != nil || u.HomeDir == "" {
		return ""
	}
	return filepath.Join(u.HomeDir, ".ssh", name)
}
