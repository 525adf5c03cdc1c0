package fleet_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/internal/temporaltest"
)

// pki is a CA with a server and a client certificate, as PEM files.
type pki struct {
	dir                                  string
	ca, serverCert, serverKey, cert, key string
	caCert                               *x509.Certificate
	caKey                                *ecdsa.PrivateKey
}

func newPKI(t *testing.T, dir, name string) *pki {
	t.Helper()
	p := &pki{dir: dir}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p.caCert, _ = x509.ParseCertificate(der)
	p.caKey = key
	p.ca = writePEM(t, dir, name+"-ca.pem", "CERTIFICATE", der)
	p.serverCert, p.serverKey = p.issue(t, name+"-server", "temporal.test", x509.ExtKeyUsageServerAuth)
	p.cert, p.key = p.issue(t, name+"-client", "nightshift-worker", x509.ExtKeyUsageClientAuth)
	return p
}

func (p *pki) issue(t *testing.T, file, cn string, usage x509.ExtKeyUsage) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		DNSNames: []string{cn}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &k.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, p.dir, file+".pem", "CERTIFICATE", der), writePEM(t, p.dir, file+"-key.pem", "EC PRIVATE KEY", kd)
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// handshake is what the TLS listener saw of one client.
type handshake struct {
	sni, clientCN string
	err           error
}

// mtlsListener is a loopback TLS endpoint that demands a client
// certificate signed by p's CA (as a Temporal frontend with mTLS does) and
// reports each handshake.
func mtlsListener(t *testing.T, p *pki) (addr string, seen <-chan handshake) {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ch := make(chan handshake, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			tc := c.(*tls.Conn)
			err = tc.HandshakeContext(context.Background())
			h := handshake{err: err, sni: tc.ConnectionState().ServerName}
			if pc := tc.ConnectionState().PeerCertificates; err == nil && len(pc) > 0 {
				h.clientCN = pc[0].Subject.CommonName
			}
			select {
			case ch <- h:
			default:
			}
			c.Close()
		}
	}()
	return l.Addr().String(), ch
}

// dialOnce dials addr with the Temporal client and returns the first
// handshake the listener saw and the dial's error (the listener is no
// Temporal server, so the dial itself always fails after the handshake).
func dialOnce(t *testing.T, addr string, seen <-chan handshake, files fleet.TLS) (handshake, error) {
	t.Helper()
	cfg, err := files.Config()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: temporaltest.Quiet{},
		ConnectionOptions: client.ConnectionOptions{TLS: cfg}})
	if err == nil {
		c.Close()
		t.Fatal("the dial succeeded against a listener that is no Temporal server")
	}
	select {
	case h := <-seen:
		return h, err
	case <-time.After(5 * time.Second):
		t.Fatalf("no TLS handshake reached the listener; dial: %v", err)
	}
	return handshake{}, err
}

// The Temporal client dialled with fleet.TLS presents the client
// certificate, which the listener verifies against its CA, sends the
// server name given, and verifies the server's certificate with the CA
// given: without a client certificate, or with another CA, the handshake
// fails.
func TestTLSDialsMutualTLS(t *testing.T) {
	dir := t.TempDir()
	p := newPKI(t, dir, "good")
	other := newPKI(t, dir, "other")
	addr, seen := mtlsListener(t, p)

	h, _ := dialOnce(t, addr, seen, fleet.TLS{Cert: p.cert, Key: p.key, CA: p.ca, ServerName: "temporal.test"})
	if h.err != nil || h.clientCN != "nightshift-worker" || h.sni != "temporal.test" {
		t.Fatalf("mTLS handshake: %+v; want the client certificate nightshift-worker and SNI temporal.test", h)
	}

	h, _ = dialOnce(t, addr, seen, fleet.TLS{CA: p.ca, ServerName: "temporal.test"})
	if h.err == nil || !strings.Contains(h.err.Error(), "certificate") {
		t.Fatalf("a client without a certificate was let in: %+v", h)
	}

	h, err := dialOnce(t, addr, seen, fleet.TLS{Cert: other.cert, Key: other.key, CA: other.ca, ServerName: "temporal.test"})
	if h.err == nil || err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a server certificate of another CA was accepted: listener %+v, dial %v", h, err)
	}
}

// Bad TLS files are refused before anything is dialled, naming the file.
func TestTLSConfigRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	p := newPKI(t, dir, "good")
	other := newPKI(t, dir, "other")
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not PEM\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		files fleet.TLS
		want  string
	}{
		{"cert without key", fleet.TLS{Cert: p.cert}, "give both or neither"},
		{"key without cert", fleet.TLS{Key: p.key}, "give both or neither"},
		{"missing cert", fleet.TLS{Cert: filepath.Join(dir, "nope.pem"), Key: p.key}, "nope.pem"},
		{"key of another cert", fleet.TLS{Cert: p.cert, Key: other.key}, "private key does not match"},
		{"CA not PEM", fleet.TLS{CA: junk}, "junk.pem: no PEM certificate"},
		{"CA a directory", fleet.TLS{CA: dir}, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.files.Config()
			if !errors.Is(err, fleet.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Config: %v; want ErrConfig naming %q", err, tc.want)
			}
		})
	}
	if cfg, err := (fleet.TLS{}).Config(); cfg != nil || err != nil {
		t.Fatalf("no TLS settings: %v, %v; want a plaintext connection", cfg, err)
	}
	cfg, err := fleet.TLS{Cert: p.cert, Key: p.key, CA: p.ca, ServerName: "temporal.test"}.Config()
	if err != nil || len(cfg.Certificates) != 1 || cfg.RootCAs == nil || cfg.ServerName != "temporal.test" {
		t.Fatalf("Config: %+v, %v", cfg, err)
	}
}
