package sshexec

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"slices"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// credentials are the signers New loaded plus the agent connection.
type credentials struct {
	signers   []ssh.Signer // certificates first, then plain keys
	agent     agent.ExtendedAgent
	agentConn net.Conn
}

func (cr *credentials) close() {
	if cr.agentConn != nil {
		cr.agentConn.Close()
	}
}

// methods builds the single publickey method x/crypto tries key by key:
// in-memory and file keys first (certificates before their plain keys),
// then the agent's; each passed through wrap (which records the key that
// signs).
func (cr *credentials) methods(logger interface{ Debug(string, ...any) }, wrap func(ssh.Signer) ssh.Signer) []ssh.AuthMethod {
	return []ssh.AuthMethod{ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
		out := slices.Clone(cr.signers)
		if cr.agent != nil {
			as, err := cr.agent.Signers()
			if err != nil {
				// An agent that stopped answering is not fatal: the other
				// keys may still work.
				logger.Debug("sshexec: ssh-agent unavailable", "err", err)
			} else {
				out = append(out, as...)
			}
		}
		for i, s := range out {
			out[i] = wrap(s)
		}
		return out, nil
	})}
}

// loadCredentials reads identity files, pairs certificates and connects to
// the agent. Passphrases are fetched only for keys that need one and are
// wiped after use.
func loadCredentials(cfg *Config) (*credentials, error) {
	cr := &credentials{}
	ok := false
	defer func() {
		if !ok {
			cr.close()
		}
	}()

	var certs []*ssh.Certificate
	for _, f := range cfg.CertificateFiles {
		c, err := readCertificate(f)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}

	files := cfg.IdentityFiles
	explicit := files != nil
	if !explicit {
		for _, name := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			if p := homeFile(name); p != "" {
				files = append(files, p)
			}
		}
	}

	plain := slices.Clone(cfg.Signers)
	var withCert []ssh.Signer
	for _, f := range files {
		pem, err := os.ReadFile(f)
		if err != nil {
			if !explicit && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("read identity %s: %w", f, err)
		}
		s, err := parseKey(cfg, f, pem)
		clear(pem)
		if err != nil {
			return nil, err
		}
		plain = append(plain, s)
		if c, err := readCertificate(f + "-cert.pub"); err == nil {
			certs = append(certs, c)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	for _, c := range certs {
		paired := false
		for _, s := range plain {
			if bytes.Equal(c.Key.Marshal(), s.PublicKey().Marshal()) {
				cs, err := ssh.NewCertSigner(c, s)
				if err != nil {
					return nil, fmt.Errorf("certificate %q: %w", c.KeyId, err)
				}
				withCert = append(withCert, cs)
				paired = true
				break
			}
		}
		if !paired {
			return nil, fmt.Errorf("certificate %q (serial %d) certifies none of the identities", c.KeyId, c.Serial)
		}
	}
	cr.signers = append(withCert, plain...)

	if !cfg.NoAgent {
		sock := cfg.AgentSocket
		if sock == "" {
			sock = os.Getenv("SSH_AUTH_SOCK")
		}
		if sock != "" {
			conn, err := net.Dial("unix", sock)
			if err != nil {
				if cfg.AgentSocket != "" {
					return nil, fmt.Errorf("connect to ssh-agent %s: %w", sock, err)
				}
				cfg.Logger.Warn("sshexec: ssh-agent not reachable; continuing without it", "socket", sock, "err", err)
			} else {
				cr.agentConn = conn
				cr.agent = agent.NewClient(conn)
			}
		}
	}
	if len(cr.signers) == 0 && cr.agent == nil {
		return nil, errors.New("no credentials: no identity file, signer or ssh-agent")
	}
	ok = true
	return cr, nil
}

// parseKey parses a private key, asking for a passphrase only if the key is
// encrypted: first the environment variable, then the prompt.
func parseKey(cfg *Config, file string, pem []byte) (ssh.Signer, error) {
	s, err := ssh.ParsePrivateKey(pem)
	if err == nil {
		return s, nil
	}
	var missing *ssh.PassphraseMissingError
	if !errors.As(err, &missing) {
		return nil, fmt.Errorf("parse identity %s: %w", file, err)
	}
	var pass []byte
	if v, ok := os.LookupEnv(cfg.PassphraseEnv); ok {
		pass = []byte(v)
	} else if cfg.Passphrase != nil {
		pass, err = cfg.Passphrase(file)
		if err != nil {
			return nil, fmt.Errorf("passphrase for identity %s: %w", file, err)
		}
	} else {
		return nil, fmt.Errorf("identity %s: %w (set $%s or configure a passphrase prompt)", file, ErrPassphraseRequired, cfg.PassphraseEnv)
	}
	defer clear(pass)
	s, err = ssh.ParsePrivateKeyWithPassphrase(pem, pass)
	if err != nil {
		if errors.Is(err, x509.IncorrectPasswordError) {
			return nil, fmt.Errorf("decrypt identity %s: incorrect passphrase: %w", file, err)
		}
		return nil, fmt.Errorf("decrypt identity %s: %w", file, err)
	}
	return s, nil
}

func readCertificate(file string) (*ssh.Certificate, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read certificate %s: %w", file, err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		return nil, fmt.Errorf("parse certificate %s: %w", file, err)
	}
	c, ok := pub.(*ssh.Certificate)
	if !ok {
		return nil, fmt.Errorf("certificate %s holds a plain %s key, not a certificate", file, pub.Type())
	}
	if c.CertType != ssh.UserCert {
		return nil, fmt.Errorf("certificate %s is a host certificate, not a user certificate", file)
	}
	return c, nil
}
