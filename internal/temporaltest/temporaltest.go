// Package temporaltest starts a real Temporal dev server for tests and
// benchmarks: `temporal server start-dev --headless` from the Temporal CLI
// that scripts/install-test-deps.sh installs, on loopback ports, with an
// in-memory store, stopped when the test ends. Safe for concurrent use by
// parallel tests (each gets its own server).
package temporaltest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// CLI returns the path of the Temporal CLI: $GOPATH/bin/temporal, else
// temporal on PATH. Missing, the test skips — or fails when the CI
// environment variable is set.
func CLI(t testing.TB) string {
	t.Helper()
	var cands []string
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		cands = append(cands, filepath.Join(strings.TrimSpace(string(out)), "bin", "temporal"))
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		cands = append(cands, p)
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c
		}
	}
	testenv.Unavailable(t, "the Temporal CLI is missing (run scripts/install-test-deps.sh)")
	return ""
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start runs a dev server and returns its frontend address once its health
// check answers.
func Start(t testing.TB) string {
	t.Helper()
	bin := CLI(t)
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--http-port", strconv.Itoa(freePort(t)), "--metrics-port", strconv.Itoa(freePort(t)), "--log-level", "error")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: Quiet{}})
		if err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
		}
		cancel()
		if err == nil {
			return addr
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the Temporal dev server did not answer on %s:\n%s", addr, out.String())
	return ""
}

// Quiet is a Temporal SDK logger that discards everything.
type Quiet struct{}

func (Quiet) Debug(string, ...any) {}
func (Quiet) Info(string, ...any)  {}
func (Quiet) Warn(string, ...any)  {}
func (Quiet) Error(string, ...any) {}
