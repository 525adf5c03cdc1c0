package vllmsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/vllm")

const goldenDir = "../testdata/vllm"

// golden compares got with testdata/vllm/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.WriteFile(path, append(bytes.TrimRight(got, "\n"), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(bytes.TrimRight(want, "\n"), bytes.TrimRight(got, "\n")) {
		t.Errorf("%s differs from the golden file\n got: %s\nwant: %s", name, got, want)
	}
}

// fixedTime makes "created" reproducible.
var fixedTime = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

type testServer struct {
	sim    *vllmsim.Server
	url    string // server root
	client *openai.Client
}

// start runs cfg (with the test counter and fixed time/seed unless set) on
// an httptest server.
func start(t *testing.T, cfg vllmsim.Config) *testServer {
	t.Helper()
	if cfg.Counter == nil {
		cfg.Counter = newCounter(t)
	}
	if cfg.Policy == nil {
		cfg.Policy = vllmsim.Repeater("")
	}
	if cfg.Created.IsZero() {
		cfg.Created = fixedTime
	}
	sim, err := vllmsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(sim.Handler())
	t.Cleanup(hs.Close)
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = hs.URL + "/v1"
	return &testServer{sim: sim, url: hs.URL, client: openai.NewClientWithConfig(oc)}
}

// post sends a raw JSON body and returns status and body.
func (ts *testServer) post(t *testing.T, path string, body any) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(ts.url+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func (ts *testServer) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(ts.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func (ts *testServer) chat(t *testing.T, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	t.Helper()
	if req.Model == "" {
		req.Model = ts.sim.Model()
	}
	return ts.client.CreateChatCompletion(context.Background(), req)
}

// workerTools are the tools the worker offers.
func workerTools() []openai.Tool {
	params := func(props string, required ...string) json.RawMessage {
		r, _ := json.Marshal(required)
		return json.RawMessage(`{"type":"object","properties":` + props + `,"required":` + string(r) + `}`)
	}
	return []openai.Tool{
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: nightshift.ToolApply, Description: "Run a shell command on the host.",
			Parameters: params(`{"command":{"type":"string"},"reason":{"type":"string"}}`, "command"),
		}},
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: nightshift.ToolGiveUp, Description: "Stop: the rule cannot be fixed safely.",
			Parameters: params(`{"reason":{"type":"string"}}`, "reason"),
		}},
	}
}

// baseMessages is a worker-like opening: instruction and task.
func baseMessages(rule string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "Rule: " + rule + "\nYou fix one compliance rule on a Linux host by calling ssh_apply."},
		{Role: openai.ChatMessageRoleUser, Content: "The check for " + rule + " fails. Fix it."},
	}
}

// converse runs turns attempts of a worker-like loop: every tool call gets
// a failing result appended. It returns the responses.
func converse(t *testing.T, ts *testServer, rule string, turns int) []openai.ChatCompletionResponse {
	t.Helper()
	msgs := baseMessages(rule)
	var out []openai.ChatCompletionResponse
	for range turns {
		resp, err := ts.chat(t, openai.ChatCompletionRequest{Messages: msgs, Tools: workerTools(), MaxCompletionTokens: 4096})
		if err != nil {
			t.Fatalf("turn %d: %v", len(out)+1, err)
		}
		out = append(out, resp)
		m := resp.Choices[0].Message
		msgs = append(msgs, m)
		for _, tc := range m.ToolCalls {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Content: "exit status 1\ncheck still failing"})
		}
		if len(m.ToolCalls) == 0 {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "Please call a tool."})
		}
	}
	return out
}
