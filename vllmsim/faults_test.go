package vllmsim_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/vllmsim"
)

func TestFaults(t *testing.T) {
	ts := start(t, vllmsim.Config{Faults: []vllmsim.Fault{
		{Kind: vllmsim.FaultUnavailable, Times: 2},
		{Kind: vllmsim.FaultRateLimited, RetryAfter: 1500 * time.Millisecond},
		{Kind: vllmsim.FaultClose},
		{Kind: vllmsim.FaultDelay, Delay: time.Millisecond},
	}})
	req := openai.ChatCompletionRequest{Messages: baseMessages("r"), Tools: workerTools()}
	for i, want := range []int{503, 503, 429} {
		_, err := ts.chat(t, req)
		var ae *openai.APIError
		if !errors.As(err, &ae) || ae.HTTPStatusCode != want {
			t.Fatalf("request %d: %v, want HTTP %d", i+1, err, want)
		}
	}
	_, err := ts.chat(t, req)
	var ae *openai.APIError
	if err == nil || errors.As(err, &ae) {
		t.Fatalf("closed connection: got %v, want a transport error", err)
	}
	if _, err := ts.chat(t, req); err != nil {
		t.Fatalf("after a short delay the request is served: %v", err)
	}
	if _, err := ts.chat(t, req); err != nil {
		t.Fatalf("faults exhausted: %v", err)
	}
	var faults []string
	for _, r := range ts.sim.Stats().Records {
		faults = append(faults, r.Fault)
	}
	want := []string{"unavailable", "unavailable", "rate-limited", "close", "", ""}
	if len(faults) != len(want) {
		t.Fatalf("faults %q, want %q", faults, want)
	}
	for i := range want {
		if faults[i] != want[i] {
			t.Errorf("record %d fault %q, want %q", i, faults[i], want[i])
		}
	}
	if n := len(ts.sim.Stats().Completions()); n != 2 {
		t.Errorf("%d served completions, want 2", n)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	ts := start(t, vllmsim.Config{})
	if err := ts.sim.InjectFaults(vllmsim.Fault{Kind: vllmsim.FaultRateLimited, RetryAfter: 1500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(ts.url+"/v1/chat/completions", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("status %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if err := ts.sim.InjectFaults(vllmsim.Fault{Kind: 42}); err == nil {
		t.Error("unknown fault kind accepted")
	}
}

// TestDelayHonoursClient: a client that gives up during an injected delay
// gets its own context error, and the server records the abandonment.
func TestDelayHonoursClient(t *testing.T) {
	sim, err := vllmsim.New(vllmsim.Config{Counter: newCounter(t), Policy: vllmsim.GiveUp(1, ""),
		Faults: []vllmsim.Fault{{Kind: vllmsim.FaultDelay, Delay: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	arrived := make(chan struct{})
	finished := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		sim.Handler().ServeHTTP(w, r)
		close(finished)
	}))
	defer hs.Close()
	oc := openai.DefaultConfig("")
	oc.BaseURL = hs.URL + "/v1"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := openai.NewClientWithConfig(oc).CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: sim.Model(), Messages: baseMessages("r")})
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	<-finished
	recs := sim.Stats().Records
	if len(recs) != 1 || recs[0].Fault != "delay" || recs[0].Error == "" {
		t.Errorf("records %+v", recs)
	}
}

func TestStart(t *testing.T) {
	sim, err := vllmsim.New(vllmsim.Config{Counter: newCounter(t), Policy: vllmsim.GiveUp(1, "")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, stop, err := sim.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oc := openai.DefaultConfig("")
	oc.BaseURL = url + "/v1"
	c := openai.NewClientWithConfig(oc)
	if _, err := c.ListModels(context.Background()); err != nil {
		t.Fatal(err)
	}
	stop()
	stop() // idempotent
	if _, err := c.ListModels(context.Background()); err == nil {
		t.Error("server still answers after stop")
	}
}
