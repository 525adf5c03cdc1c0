package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"
)

// TestSimulateServerInProcess runs `worker simulate-server` in this
// process (run, as main calls it): it serves /v1/models on the port it
// names, and returns nil once its context ends. simulate.txtar checks the
// same through a worker process, without -race (the Makefile's NORACE);
// here the race detector watches the server's goroutine and its shutdown.
func TestSimulateServerInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"simulate-server", "--addr", "127.0.0.1:0", "--policy", "stubborn"}, nil, pw, io.Discard)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("simulate-server printed no line: %v (run: %v)", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := regexp.MustCompile(`^simulated vLLM serving (\S+) \(max_model_len (\d+), policy stubborn\) on (http://127\.0\.0\.1:\d+/v1)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("simulate-server's first line %q", line)
	}
	resp, err := http.Get(m[3] + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/models: %s, %v", resp.Status, err)
	}
	if len(models.Data) != 1 || models.Data[0].ID != m[1] || models.Data[0].MaxModelLen != 16384 || m[2] != "16384" {
		t.Errorf("GET /v1/models: %+v, want one model %s with max_model_len 16384 (as the first line says: %q)", models.Data, m[1], line)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("simulate-server after its context ended: %v, want nil", err)
	}
}
