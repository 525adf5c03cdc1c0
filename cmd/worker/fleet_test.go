package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bad fleet invocations are usage errors (exit 2) naming the problem,
// before any connection to Temporal.
func TestFleetUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"fleet"}, "no subcommand"},
		{"unknown subcommand", []string{"fleet", "launch"}, `unknown subcommand "launch"`},
		{"start without rules", []string{"fleet", "start", "--inventory", "x.yaml"}, "--rules (or --datastream with --profile) and --inventory are required"},
		{"start datastream without profile", []string{"fleet", "start", "--datastream", "/ds.xml", "--inventory", "x"}, "--datastream needs --profile"},
		{"start reports without wait", []string{"fleet", "start", "--rules", "r", "--inventory", "i", "--html", "h"}, "need --wait"},
		{"start wait and schedule", []string{"fleet", "start", "--rules", "r", "--inventory", "i", "--wait", "--schedule", "0 2 * * *"}, "cannot be combined"},
		{"start short heartbeat", []string{"fleet", "start", "--rules", "r", "--inventory", "i", "--heartbeat", "10ms"}, "--heartbeat"},
		{"start missing rules file", []string{"fleet", "start", "--rules", "/nonexistent.yaml", "--inventory", "i"}, "nonexistent.yaml"},
		{"serve empty zone", []string{"fleet", "serve", "--zone", ""}, "--zone must not be empty"},
		{"serve negative slots", []string{"fleet", "serve", "--model-slots", "-1"}, "must not be negative"},
		{"status no run", []string{"fleet", "status"}, "exactly one RUN"},
		{"report two runs", []string{"fleet", "report", "a", "b"}, "exactly one RUN"},
		{"cancel nothing", []string{"fleet", "cancel"}, "exactly one RUN, or --schedule"},
		{"export no run", []string{"fleet", "export", "--shell", "x.sh"}, "exactly one RUN"},
		{"export nothing to write", []string{"fleet", "export", "tonight"}, "give --ansible DIR or --shell FILE"},
		{"start seed and no replay", []string{"fleet", "start", "--rules", "r", "--inventory", "i", "--recipes", "j.db", "--no-recipes"}, "--recipes and --no-recipes cannot be combined"},
		{"bad flag", []string{"fleet", "serve", "--nope"}, "not defined"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := cli(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(out+errOut, tt.want) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, exitUsage, tt.want, out, errOut)
			}
		})
	}
}

func TestFleetHelp(t *testing.T) {
	for _, sub := range []string{"serve", "start", "status", "report", "cancel", "undo", "export"} {
		code, out, errOut := cli(t, "", "fleet", sub, "--help")
		if code != exitOK || !strings.Contains(out+errOut, "worker fleet "+sub) {
			t.Errorf("fleet %s --help: exit %d\n%s%s", sub, code, out, errOut)
		}
	}
}

// The --tls-* flags (every fleet subcommand has them: fleet.txtar) reach
// the Temporal client's options: a certificate and key make a client
// certificate, a CA bundle the roots, --tls-server-name the name checked;
// none is plaintext. fleet's TestTLSDialsMutualTLS dials with such options.
func TestFleetTLSOptions(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nightshift-worker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600); err != nil {
		t.Fatal(err)
	}
	var tls temporalFlags
	fs := newFlags(cmdFleetStatus, io.Discard)
	bindTemporalFlags(fs, &tls)
	if err := fs.Parse([]string{"--tls-cert", cert, "--tls-key", keyFile, "--tls-ca", cert, "--tls-server-name", "temporal.internal"}); err != nil {
		t.Fatal(err)
	}
	opts, err := tls.options(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c := opts.ConnectionOptions.TLS; c == nil || len(c.Certificates) != 1 || c.RootCAs == nil || c.ServerName != "temporal.internal" {
		t.Fatalf("TLS options %+v", c)
	}
	var tf temporalFlags
	if opts, err := tf.options(io.Discard); err != nil || opts.ConnectionOptions.TLS != nil {
		t.Fatalf("no --tls-* flags: %+v, %v; want plaintext", opts.ConnectionOptions.TLS, err)
	}
}
