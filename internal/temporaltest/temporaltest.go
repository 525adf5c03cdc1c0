// Package temporaltest starts a real Temporal dev server for tests and
// benchmarks: `temporal server start-dev --headless` from the Temporal CLI
// that scripts/install-test-deps.sh installs, on loopback ports, with an
// in-memory store, stopped when the test ends. Safe for concurrent use by
// parallel tests (each gets its own server).
package temporaltest

import (
	"bytes"
	"context"
	"errors"
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

// ErrNoCLI: the Temporal CLI is not installed.
var ErrNoCLI = errors.New("the Temporal CLI is missing (run scripts/install-test-deps.sh)")

// Find returns the path of the Temporal CLI: $GOPATH/bin/temporal, else
// temporal on PATH; ErrNoCLI when neither exists.
func Find() (string, error) {
	var cands []string
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		cands = append(cands, filepath.Join(strings.TrimSpace(string(out)), "bin", "temporal"))
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		cands = append(cands, p)
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c, nil
		}
	}
	return "", ErrNoCLI
}

// CLI returns the path of the Temporal CLI (Find). Missing, the test skips
// — or fails when the CI environment variable is set.
func CLI(t testing.TB) string {
	t.Helper()
	bin, err := Find()
	if err != nil {
		testenv.Unavailable(t, "%v", err)
	}
	return bin
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start runs a dev server and returns its frontend address once its health
// check answers; the server stops when the test ends.
func Start(t testing.TB) string {
	t.Helper()
	addr, stop, err := Run(CLI(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// Run starts a dev server from the Temporal CLI bin and returns its
// frontend address once its health check answers, and the function that
// stops it (for callers without a testing.TB, such as testscript commands).
func Run(bin string) (addr string, stop func(), err error) {
	var ports [3]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return "", nil, err
		}
	}
	addr = fmt.Sprintf("127.0.0.1:%d", ports[0])
	cmd := exec.Command(bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(ports[0]),
		"--http-port", strconv.Itoa(ports[1]), "--metrics-port", strconv.Itoa(ports[2]), "--log-level", "error")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
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
			return addr, stop, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("the Temporal dev server did not answer on %s:\n%s", addr, out.String())
}

// Quiet is a Temporal SDK logger that discards everything.
type Quiet struct{}

func (Quiet) Debug(string, ...any) {}
func (Quiet) Info(string, ...any)  {}
func (Quiet) Warn(string, ...any)  {}
func (Quiet) Error(string, ...any) {}
