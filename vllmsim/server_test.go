package vllmsim_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/vllmsim"
)

func TestNewValidates(t *testing.T) {
	c := newCounter(t)
	p := vllmsim.Repeater("")
	for _, tc := range []struct {
		name string
		cfg  vllmsim.Config
	}{
		{"no counter", vllmsim.Config{Policy: p}},
		{"no policy", vllmsim.Config{Counter: c}},
		{"negative window", vllmsim.Config{Counter: c, Policy: p, MaxModelLen: -1}},
		{"unknown style", vllmsim.Config{Counter: c, Policy: p, ErrorStyle: 99}},
		{"unknown shape", vllmsim.Config{Counter: c, Policy: p, ErrorShape: 7}},
		{"bad fault", vllmsim.Config{Counter: c, Policy: p, Faults: []vllmsim.Fault{{Kind: vllmsim.FaultDelay}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := vllmsim.New(tc.cfg); !errors.Is(err, vllmsim.ErrConfig) {
				t.Fatalf("New: %v, want ErrConfig", err)
			}
		})
	}
	s, err := vllmsim.New(vllmsim.Config{Counter: c, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	if s.Model() != "Qwen/Qwen3-8B" || s.MaxModelLen() != 16384 {
		t.Errorf("defaults: %q %d", s.Model(), s.MaxModelLen())
	}
}

func TestModels(t *testing.T) {
	ts := start(t, vllmsim.Config{Seed: 1})
	status, raw := ts.get(t, "/v1/models")
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	golden(t, "models.json", raw)
	list, err := ts.client.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Models) != 1 || list.Models[0].ID != "Qwen/Qwen3-8B" || list.Models[0].OwnedBy != "vllm" || list.Models[0].Root != "Qwen/Qwen3-8B" || list.Models[0].Object != "model" {
		t.Errorf("models %+v", list.Models)
	}
	var generic struct {
		Object string `json:"object"`
		Data   []struct {
			MaxModelLen int `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &generic); err != nil || generic.Object != "list" || generic.Data[0].MaxModelLen != 16384 {
		t.Errorf("list %s: %v", raw, err)
	}
}

func TestHealthVersionNotFound(t *testing.T) {
	ts := start(t, vllmsim.Config{ErrorStyle: vllmsim.StyleTooLarge})
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{
		{"/health", 200, ""},
		{"/version", 200, `{"version":"0.11.0"}`},
		{"/v1/completions", 404, `{"detail":"Not Found"}`},
	} {
		status, body := ts.get(t, tc.path)
		if status != tc.status || string(body) != tc.body {
			t.Errorf("GET %s: %d %s, want %d %s", tc.path, status, body, tc.status, tc.body)
		}
	}
}

func TestTokenize(t *testing.T) {
	ts := start(t, vllmsim.Config{MaxModelLen: 4096})
	c := newCounter(t)
	req := openai.ChatCompletionRequest{Messages: baseMessages("sshd_disable_root_login"), Tools: workerTools()}
	withGen, err := c.EncodeChat(req, true)
	if err != nil {
		t.Fatal(err)
	}
	withoutGen, err := c.EncodeChat(req, false)
	if err != nil {
		t.Fatal(err)
	}
	text := "PermitRootLogin no\n"
	type result struct {
		Count       int       `json:"count"`
		MaxModelLen int       `json:"max_model_len"`
		Tokens      []int     `json:"tokens"`
		TokenStrs   *[]string `json:"token_strs"`
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		want []int
	}{
		{"completion", map[string]any{"model": ts.sim.Model(), "prompt": text, "add_special_tokens": false}, c.Encode(text)},
		{"completion-no-model", map[string]any{"prompt": text}, c.Encode(text)},
		{"chat-default-generation-prompt", map[string]any{"model": ts.sim.Model(), "messages": req.Messages, "tools": req.Tools}, withGen},
		{"chat-generation-prompt", map[string]any{"model": ts.sim.Model(), "messages": req.Messages, "tools": req.Tools, "add_generation_prompt": true, "add_special_tokens": false}, withGen},
		{"chat-no-generation-prompt", map[string]any{"model": ts.sim.Model(), "messages": req.Messages, "tools": req.Tools, "add_generation_prompt": false}, withoutGen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := ts.post(t, "/tokenize", tc.body)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, raw)
			}
			var r result
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			if r.Count != len(tc.want) || !reflect.DeepEqual(r.Tokens, tc.want) || r.MaxModelLen != 4096 || r.TokenStrs != nil {
				t.Errorf("got %+v, want %d tokens %v", r, len(tc.want), tc.want)
			}
			if !strings.Contains(string(raw), `"token_strs":null`) {
				t.Errorf("body %s lacks token_strs:null", raw)
			}
		})
	}
	// The chat form counts what a chat completion is charged.
	if p, err := c.CountChat(req); err != nil || p != len(withGen) || len(withoutGen) >= len(withGen) {
		t.Errorf("CountChat %d, EncodeChat %d / %d", p, len(withGen), len(withoutGen))
	}
	for _, tc := range []struct {
		name   string
		body   any
		status int
	}{
		{"neither", map[string]any{"model": ts.sim.Model()}, 400},
		{"unknown model", map[string]any{"model": "x", "prompt": "a"}, 404},
		{"both generation flags", map[string]any{"messages": req.Messages, "add_generation_prompt": true, "continue_final_message": true}, 400},
		{"token strs", map[string]any{"prompt": "a", "return_token_strs": true}, 400},
	} {
		if status, raw := ts.post(t, "/tokenize", tc.body); status != tc.status {
			t.Errorf("%s: status %d (%s), want %d", tc.name, status, raw, tc.status)
		}
	}
}

func TestAPIKey(t *testing.T) {
	ts := start(t, vllmsim.Config{APIKey: "sekret"})
	if _, err := ts.client.ListModels(context.Background()); err != nil {
		t.Fatalf("with the key: %v", err)
	}
	oc := openai.DefaultConfig("wrong")
	oc.BaseURL = ts.url + "/v1"
	_, err := openai.NewClientWithConfig(oc).ListModels(context.Background())
	var re *openai.RequestError
	if !errors.As(err, &re) || re.HTTPStatusCode != 401 || string(re.Body) != `{"error":"Unauthorized"}` {
		t.Fatalf("wrong key: %#v", err)
	}
	// /tokenize and /health are not behind --api-key in vLLM.
	if status, _ := ts.post(t, "/tokenize", map[string]any{"prompt": "x"}); status != 200 {
		t.Errorf("/tokenize without key: %d", status)
	}
	if status, _ := ts.get(t, "/health"); status != 200 {
		t.Errorf("/health without key: %d", status)
	}
	// Recorded: two model lists (one refused) and the tokenize call.
	if n := len(ts.sim.Stats().Records); n != 3 {
		t.Errorf("%d records, want 3", n)
	}
}

func TestChatResponse(t *testing.T) {
	ts := start(t, vllmsim.Config{Policy: vllmsim.Script(
		vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(`sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config`, "disable root <login> & \"quote\"")}},
		vllmsim.Generation{Text: "Checking first.", Calls: []vllmsim.Call{vllmsim.Apply("sshd -T", ""), vllmsim.GiveUpCall("ünïcode")}},
		vllmsim.Generation{Text: "All done."},
	)})
	c := newCounter(t)
	msgs := baseMessages("sshd_disable_root_login")
	for attempt := 1; attempt <= 3; attempt++ {
		req := openai.ChatCompletionRequest{Messages: msgs, Tools: workerTools(), MaxCompletionTokens: 1000}
		resp, err := ts.chat(t, req)
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.CountChat(openai.ChatCompletionRequest{Messages: msgs, Tools: workerTools()})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage.PromptTokens != p || resp.Usage.TotalTokens != p+resp.Usage.CompletionTokens {
			t.Errorf("attempt %d: usage %+v, want prompt %d", attempt, resp.Usage, p)
		}
		if !strings.HasPrefix(resp.ID, "chatcmpl-") || resp.Object != "chat.completion" || resp.Model != "Qwen/Qwen3-8B" {
			t.Errorf("envelope %s %s %s", resp.ID, resp.Object, resp.Model)
		}
		ch := resp.Choices[0]
		switch attempt {
		case 1:
			if ch.FinishReason != openai.FinishReasonToolCalls || ch.Message.Content != "" || len(ch.Message.ToolCalls) != 1 {
				t.Fatalf("attempt 1: %+v", ch)
			}
			tc := ch.Message.ToolCalls[0]
			want := `{"command": "sed -i 's/^#\\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config", "reason": "disable root <login> & \"quote\""}`
			if tc.Function.Name != "ssh_apply" || tc.Function.Arguments != want || tc.Type != "function" || !strings.HasPrefix(tc.ID, "chatcmpl-tool-") {
				t.Errorf("tool call %+v\nwant arguments %s", tc, want)
			}
		case 2:
			if ch.Message.Content != "Checking first.\n" || len(ch.Message.ToolCalls) != 2 || ch.Message.ToolCalls[1].Function.Arguments != `{"reason": "ünïcode"}` {
				t.Errorf("attempt 2: %+v", ch.Message)
			}
		case 3:
			if ch.FinishReason != openai.FinishReasonStop || ch.Message.Content != "All done." || len(ch.Message.ToolCalls) != 0 {
				t.Errorf("attempt 3: %+v", ch)
			}
			if resp.Usage.CompletionTokens != c.Count("All done.")+1 {
				t.Errorf("completion tokens %d, want text + EOS = %d", resp.Usage.CompletionTokens, c.Count("All done.")+1)
			}
		}
		msgs = append(msgs, ch.Message)
	}
	// Without tools offered (or with tool_choice "none") vLLM does not parse
	// tool calls: the block comes back as content.
	for _, tc := range []openai.ChatCompletionRequest{
		{Messages: baseMessages("r")},
		{Messages: baseMessages("r"), Tools: workerTools(), ToolChoice: "none"},
	} {
		resp, err := start(t, vllmsim.Config{Policy: vllmsim.GiveUp(1, "")}).chat(t, tc)
		if err != nil {
			t.Fatal(err)
		}
		if m := resp.Choices[0].Message; len(m.ToolCalls) != 0 || !strings.HasPrefix(m.Content, "<tool_call>") || resp.Choices[0].FinishReason != openai.FinishReasonStop {
			t.Errorf("tool_choice %v: %+v", tc.ToolChoice, resp.Choices[0])
		}
	}
	// content is JSON null, tool_calls [] when absent: check the raw body.
	ts2 := start(t, vllmsim.Config{Policy: vllmsim.GiveUp(1, "")})
	_, raw := ts2.post(t, "/v1/chat/completions", map[string]any{"model": ts2.sim.Model(), "messages": baseMessages("r"), "tools": workerTools()})
	if !strings.Contains(string(raw), `"content":null`) || !strings.Contains(string(raw), `"finish_reason":"tool_calls"`) {
		t.Errorf("body %s", raw)
	}
}

// TestTruncation: a generation longer than max_tokens is cut, reported as
// "length" and — its tool call unclosed and incomplete — returned as content.
func TestTruncation(t *testing.T) {
	cmd := strings.Repeat("echo filler words here; ", 50)
	ts := start(t, vllmsim.Config{Policy: vllmsim.Script(vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(cmd, "")}})})
	resp, err := ts.chat(t, openai.ChatCompletionRequest{Messages: baseMessages("r"), Tools: workerTools(), MaxCompletionTokens: 40})
	if err != nil {
		t.Fatal(err)
	}
	ch := resp.Choices[0]
	if ch.FinishReason != openai.FinishReasonLength || resp.Usage.CompletionTokens != 40 || len(ch.Message.ToolCalls) != 0 {
		t.Fatalf("got %+v usage %+v", ch, resp.Usage)
	}
	if !strings.HasPrefix(ch.Message.Content, "<tool_call>") || newCounter(t).Count(ch.Message.Content) > 40 {
		t.Errorf("content %q", ch.Message.Content)
	}
	// Without max_tokens the budget is the rest of the window: nothing cut.
	resp, err = ts.chat(t, openai.ChatCompletionRequest{Messages: baseMessages("r"), Tools: workerTools()})
	if err != nil || resp.Choices[0].FinishReason != openai.FinishReasonToolCalls {
		t.Fatalf("%v %+v", err, resp)
	}
}

func TestConversationParsing(t *testing.T) {
	var got []vllmsim.Conversation
	var mu sync.Mutex
	rec := recorder{f: func(c vllmsim.Conversation) {
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
	}}
	ts := start(t, vllmsim.Config{Policy: rec})
	msgs := baseMessages("sshd_disable_root_login")
	msgs = append(msgs,
		openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "a", Type: "function", Function: openai.FunctionCall{Name: "ssh_apply", Arguments: `{"command": "sshd -T"}`}}}},
		openai.ChatCompletionMessage{Role: "tool", ToolCallID: "a", Content: "permitrootlogin yes"},
	)
	if _, err := ts.chat(t, openai.ChatCompletionRequest{Messages: msgs, Tools: workerTools()}); err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, openai.ChatCompletionMessage{Role: "user", Content: "Summary of earlier turns.\nAttempt: 7"})
	if _, err := ts.chat(t, openai.ChatCompletionRequest{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d conversations", len(got))
	}
	c := got[0]
	if c.RuleID != "sshd_disable_root_login" || c.Attempt != 2 || c.LastCommand != "sshd -T" || c.LastResult != "permitrootlogin yes" || !c.Offers("give_up") {
		t.Errorf("first: %+v", c)
	}
	if got[1].Attempt != 7 || got[1].Offers("ssh_apply") {
		t.Errorf("second: attempt %d tools %v", got[1].Attempt, got[1].Tools)
	}
	if recs := ts.sim.Stats().Completions(); recs[0].RuleID != "sshd_disable_root_login" || recs[1].Attempt != 7 {
		t.Errorf("records %+v", recs)
	}
	// A system message shared by every rule: the rule is in the task.
	shared := []openai.ChatCompletionMessage{
		{Role: "system", Content: "You bring Linux hosts into compliance.\nRule: not_this_one"},
		{Role: "user", Content: "Rule: audit_rules_immutable\nTitle: Make the auditd configuration immutable"},
		{Role: "user", Content: "Rule: nor_this_one"},
	}
	if _, err := ts.chat(t, openai.ChatCompletionRequest{Messages: shared}); err != nil {
		t.Fatal(err)
	}
	if got[2].RuleID != "audit_rules_immutable" {
		t.Errorf("rule id from the task message: %q", got[2].RuleID)
	}
}

type recorder struct{ f func(vllmsim.Conversation) }

func (recorder) Name() string { return "recorder" }
func (r recorder) Next(c vllmsim.Conversation) vllmsim.Generation {
	r.f(c)
	return vllmsim.Generation{Text: "ok"}
}

// TestConcurrent serves parallel requests (run with -race).
func TestConcurrent(t *testing.T) {
	ts := start(t, vllmsim.Config{Policy: vllmsim.Stubborn(vllmsim.StubbornConfig{Seed: 3})})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs := baseMessages("rule" + string(rune('a'+i)))
			_, err := ts.client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: ts.sim.Model(), Messages: msgs, Tools: workerTools()})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := len(ts.sim.Stats().Completions()); n != 16 {
		t.Errorf("%d records", n)
	}
}
