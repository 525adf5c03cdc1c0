package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/budget"
)

// TestServerModelRetries: /v1/models answered with 429 Retry-After: 1, then
// 503 without it, then the list: the first wait is the server's 1 s (the
// backoff alone would say 500ms), the second the backoff's 1 s of a second
// failure; a 404 is a usage error at once, without retries.
func TestServerModelRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error": "busy"}`, http.StatusTooManyRequests)
		case 2:
			http.Error(w, `{"error": "loading"}`, http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte(`{"object": "list", "data": [{"id": "qwen3", "object": "model", "max_model_len": 16384}]}`))
		}
	}))
	defer srv.Close()
	base := srv.URL + "/v1"
	c, err := budget.NewVLLMClient(budget.VLLMConfig{BaseURL: base, HTTPClient: retryingClient()})
	if err != nil {
		t.Fatal(err)
	}
	var notices bytes.Buffer
	m, err := serverModel(context.Background(), c, base, "qwen3", time.Minute, &notices)
	if err != nil || m.ID != "qwen3" {
		t.Fatalf("serverModel = %+v, %v", m, err)
	}
	want := regexp.MustCompile(`^worker: model server \S+: vllm: \S+: HTTP 429: \{"error": "busy"\}; retrying in 1s, giving up at \d\d:\d\d:\d\d\n` +
		`worker: model server \S+: vllm: \S+: HTTP 503: \{"error": "loading"\}; retrying in 1s, giving up at \d\d:\d\d:\d\d\n$`)
	if !want.MatchString(notices.String()) {
		t.Errorf("notices:\n%s\nwant them to match %s", notices.String(), want)
	}

	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	c, err = budget.NewVLLMClient(budget.VLLMConfig{BaseURL: notFound.URL + "/v1", HTTPClient: retryingClient()})
	if err != nil {
		t.Fatal(err)
	}
	notices.Reset()
	_, err = serverModel(context.Background(), c, notFound.URL+"/v1", "qwen3", time.Minute, &notices)
	var ue *usageError
	if !errors.As(err, &ue) || notices.Len() != 0 {
		t.Errorf("a 404: %v with notices %q, want a usage error and no retry", err, notices.String())
	}
}

// TestServerModelHung: a server that accepts the connection and never
// answers /v1/models is bounded by the retry deadline: the model server is
// unreachable (exit 3). (Before, the first GET
// waited for as long as the server kept the connection open.)
func TestServerModelHung(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	base := "http://" + ln.Addr().String() + "/v1"
	c, err := budget.NewVLLMClient(budget.VLLMConfig{BaseURL: base, HTTPClient: retryingClient()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var notices bytes.Buffer
	_, err = serverModel(ctx, c, base, "qwen3", 1500*time.Millisecond, &notices)
	var un *unreachable
	if !errors.As(err, &un) {
		t.Fatalf("serverModel: %v, want the model server unreachable", err)
	}
	if !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("serverModel: %v, want it to say the try timed out", err)
	}
}
