package sshexec

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// hostKeys verifies host keys against known_hosts files, re-reading them at
// every dial so that edits (and keys accepted by another Client) are seen.
type hostKeys struct {
	files    []string
	accept   bool
	insecure bool
	logger   *slog.Logger

	mu    sync.Mutex // serialises appends to files[0]
	probe ssh.PublicKey
}

func newHostKeys(cfg *Config) (*hostKeys, error) {
	h := &hostKeys{
		files:    slices.Clone(cfg.KnownHostsFiles),
		accept:   cfg.AcceptNewHostKey,
		insecure: cfg.InsecureSkipHostKeyVerification,
		logger:   cfg.Logger,
	}
	if h.insecure {
		return h, nil
	}
	if len(h.files) == 0 {
		f := homeFile("known_hosts")
		if f == "" {
			return nil, errors.New("no known_hosts file configured and the home directory is unknown")
		}
		h.files = []string{f}
	}
	// A key nobody has: looking it up lists every key known for a host,
	// which orders the host key algorithms the way OpenSSH does.
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate probe key: %w", err)
	}
	h.probe, err = ssh.NewPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("generate probe key: %w", err)
	}
	return h, nil
}

// callback returns the verifier for one dial of addr ("host:port"), the
// host key algorithms to offer, known key types first (nil: defaults), and
// the key types known_hosts holds for addr (sorted).
func (h *hostKeys) callback(addr string) (ssh.HostKeyCallback, []string, []string, error) {
	if h.insecure {
		h.logger.Warn("sshexec: host key verification disabled (InsecureSkipHostKeyVerification)", "host", addr)
		return ssh.InsecureIgnoreHostKey(), nil, nil, nil
	}
	var existing []string
	for _, f := range h.files {
		if _, err := os.Stat(f); err == nil {
			existing = append(existing, f)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, fmt.Errorf("known_hosts %s: %w", f, err)
		}
	}
	var db ssh.HostKeyCallback
	if len(existing) > 0 {
		var err error
		db, err = knownhosts.New(existing...)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("read known_hosts: %w", err)
		}
	}
	lookup := func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		if db == nil {
			return &knownhosts.KeyError{}
		}
		return db(hostname, remote, key)
	}
	known := h.knownKeys(lookup, addr)
	verify := func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := lookup(hostname, remote, key)
		if err == nil {
			return nil
		}
		herr := &HostKeyError{
			Host:            knownhosts.Normalize(hostname),
			KeyType:         key.Type(),
			Fingerprint:     ssh.FingerprintSHA256(key),
			KnownHostsFiles: h.files,
		}
		var kerr *knownhosts.KeyError
		var rerr *knownhosts.RevokedError
		switch {
		case errors.As(err, &rerr):
			herr.Problem = HostKeyRevoked
			herr.Known = []KnownKey{toKnown(rerr.Revoked)}
		case errors.As(err, &kerr):
			herr.Problem = HostKeyUnknown
			for _, w := range kerr.Want {
				if w.Key.Type() == key.Type() {
					herr.Problem = HostKeyChanged
				}
			}
			for _, w := range kerr.Want {
				if (herr.Problem == HostKeyChanged) == (w.Key.Type() == key.Type()) {
					herr.Known = append(herr.Known, toKnown(w))
				}
			}
			if herr.Problem == HostKeyUnknown && len(kerr.Want) == 0 && h.accept {
				if err := h.add(hostname, key); err != nil {
					return fmt.Errorf("accept new host key %s for %s: %w", herr.Fingerprint, herr.Host, err)
				}
				h.logger.Info("sshexec: accepted new host key", "host", herr.Host, "type", herr.KeyType, "fingerprint", herr.Fingerprint, "known_hosts", h.files[0])
				return nil
			}
		default:
			return fmt.Errorf("check known_hosts: %w", err)
		}
		return herr
	}
	var types []string
	for _, k := range known {
		if !slices.Contains(types, k.Key.Type()) {
			types = append(types, k.Key.Type())
		}
	}
	slices.Sort(types)
	return verify, hostKeyAlgorithms(known), types, nil
}

// knownKeys lists the keys on file for addr by looking up the probe key.
func (h *hostKeys) knownKeys(lookup ssh.HostKeyCallback, addr string) []knownhosts.KnownKey {
	remote, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		remote = &net.TCPAddr{}
	}
	var kerr *knownhosts.KeyError
	if errors.As(lookup(addr, remote, h.probe), &kerr) {
		return kerr.Want
	}
	return nil
}

// hostKeyAlgorithms orders x/crypto's supported host key algorithms so that
// those matching known key types come first. Keys of other types stay
// acceptable, and are then reported as unknown rather than changed.
func hostKeyAlgorithms(known []knownhosts.KnownKey) []string {
	if len(known) == 0 {
		return nil
	}
	types := map[string]bool{}
	for _, k := range known {
		types[k.Key.Type()] = true
	}
	all := ssh.SupportedAlgorithms().HostKeys
	var first, rest []string
	for _, a := range all {
		keyType := a
		switch a {
		case ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSASHA512:
			keyType = ssh.KeyAlgoRSA
		}
		if types[keyType] {
			first = append(first, a)
		} else {
			rest = append(rest, a)
		}
	}
	return append(first, rest...)
}

func toKnown(k knownhosts.KnownKey) KnownKey {
	return KnownKey{File: k.Filename, Line: k.Line, Type: k.Key.Type(), Fingerprint: ssh.FingerprintSHA256(k.Key)}
}

// add appends hostname's key to the first known_hosts file.
func (h *hostKeys) add(hostname string, key ssh.PublicKey) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	file := h.files[0]
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(hostname)}, key) + "\n"
	// Keep a file whose last line lacks its newline well formed.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err != nil && err != io.EOF {
			f.Close()
			return err
		}
		if last[0] != '\n' {
			line = "\n" + line
		}
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
