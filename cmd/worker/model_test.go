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

	"github.com/nightshift-dev/nightshift/served"
)

// TestServerModelRetries: /v1/models answered with 429 Retry-After: 1, then
// 503 without it, then the list: one notice per failed try, the first wait
// the server's 1 s (the backoff alone would say 500ms), the second the
// backoff's 1 s of a second failure; a 404 is a usage error at once,
// without retries.
func TestServerModelRetries(t *testing.T) {
	t.Parallel()
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
	var notices bytes.Buffer
	m, err := connect(context.Background(), served.Config{BaseURL: base, Name: "qwen3", Wait: time.Minute}, &notices)
	if err != nil || m.Name() != "qwen3" {
		t.Fatalf("connect = %v, %v", m, err)
	}
	want := regexp.MustCompile(`^worker: model server \S+: vllm: \S+: HTTP 429: \{"error": "busy"\}; retrying in 1s, giving up at \d\d:\d\d:\d\d\n` +
		`worker: model server \S+: vllm: \S+: HTTP 503: \{"error": "loading"\}; retrying in 1s, giving up at \d\d:\d\d:\d\d\n$`)
	if !want.MatchString(notices.String()) {
		t.Errorf("notices:\n%s\nwant them to match %s", notices.String(), want)
	}

	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	notices.Reset()
	_, err = connect(context.Background(), served.Config{BaseURL: notFound.URL + "/v1", Name: "qwen3", Wait: time.Minute}, &notices)
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
	t.Parallel()
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var notices bytes.Buffer
	_, err = connect(ctx, served.Config{BaseURL: base, Name: "qwen3", Wait: 1500 * time.Millisecond}, &notices)
	var un *unreachable
	if !errors.As(err, &un) {
		t.Fatalf("connect: %v, want the model server unreachable", err)
	}
	if !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("connect: %v, want it to say the try timed out", err)
	}
}
