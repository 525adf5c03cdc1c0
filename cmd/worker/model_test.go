package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
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
