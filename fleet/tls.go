package fleet

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	"github.com/nightshift-dev/nightshift/internal/readfile"
)

// maxPEM caps each certificate, key or CA bundle file read.
const maxPEM = 1 << 20

// TLS names the files of a TLS connection to the Temporal frontend, as an
// SRE running Temporal with mTLS hands them to its workers: the client's
// certificate and key (both or neither), the CA bundle that signed the
// frontend's certificate (empty: the system's roots) and the name the
// frontend's certificate must carry (empty: the host of the address
// dialled). The zero value is a plaintext connection.
type TLS struct {
	Cert, Key, CA, ServerName string
}

// Enabled reports whether any TLS setting is given: any one of them makes
// the connection TLS.
func (t TLS) Enabled() bool {
	return t.Cert != "" || t.Key != "" || t.CA != "" || t.ServerName != ""
}

// Config loads and checks the files before anything is dialled: the
// certificate and its key must both be given, be regular files of PEM and
// match; the CA bundle must hold at least one certificate. It returns nil
// when TLS is not enabled. Errors wrap ErrConfig and name the file.
func (t TLS) Config() (*tls.Config, error) {
	if !t.Enabled() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	switch {
	case (t.Cert == "") != (t.Key == ""):
		return nil, fmt.Errorf("%w: a TLS client certificate and its key go together (give both or neither)", ErrConfig)
	case t.Cert != "":
		certPEM, err := readfile.Read(t.Cert, maxPEM)
		if err != nil {
			return nil, fmt.Errorf("%w: TLS certificate: %w", ErrConfig, err)
		}
		keyPEM, err := readfile.Read(t.Key, maxPEM)
		if err != nil {
			return nil, fmt.Errorf("%w: TLS key: %w", ErrConfig, err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("%w: TLS certificate %s and key %s: %w", ErrConfig, t.Cert, t.Key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if t.CA != "" {
		data, err := readfile.Read(t.CA, maxPEM)
		if err != nil {
			return nil, fmt.Errorf("%w: TLS CA: %w", ErrConfig, err)
		}
		pool := x509.NewCertPool()
		n := 0
		for rest := data; ; {
			var b *pem.Block
			b, rest = pem.Decode(rest)
			if b == nil {
				break
			}
			if b.Type != "CERTIFICATE" {
				continue
			}
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: TLS CA %s: certificate %d: %w", ErrConfig, t.CA, n+1, err)
			}
			pool.AddCert(c)
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: TLS CA %s: no PEM certificate in it", ErrConfig, t.CA)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}
