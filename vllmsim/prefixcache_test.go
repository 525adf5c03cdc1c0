package vllmsim_test

import (
	"bytes"
	"encoding/json"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/vllmsim"
)

// TestPrefixCacheUsage checks usage.prompt_tokens_details.cached_tokens
// against an oracle built from /tokenize: a request that extends an earlier
// one is served from the cache for the whole 16-token blocks of their
// common token prefix, never for its last token; the field is null when
// nothing came from the cache, and absent without PromptTokensDetails.
func TestPrefixCacheUsage(t *testing.T) {
	ts := start(t, vllmsim.Config{PromptTokensDetails: true})
	tokens := func(msgs []openai.ChatCompletionMessage) []int {
		t.Helper()
		status, body := ts.post(t, "/tokenize", map[string]any{"model": ts.sim.Model(), "messages": msgs, "tools": workerTools()})
		if status != 200 {
			t.Fatalf("tokenize: %d %s", status, body)
		}
		var out struct{ Tokens []int }
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		return out.Tokens
	}
	common := func(a, b []int) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	first := baseMessages("sshd_disable_root_login")
	second := append(append([]openai.ChatCompletionMessage(nil), first...),
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "Attempt: 2\nThe check still fails; try again with another command."})
	third := append(append([]openai.ChatCompletionMessage(nil), second[:1]...),
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "A different task message."})

	var prev []int
	for i, msgs := range [][]openai.ChatCompletionMessage{first, second, second, third} {
		resp, err := ts.chat(t, openai.ChatCompletionRequest{Messages: msgs, Tools: workerTools(), MaxCompletionTokens: 256})
		if err != nil {
			t.Fatal(err)
		}
		cur := tokens(msgs)
		want := 0
		if prev != nil {
			want = min(common(prev, cur), len(cur)-1) / 16 * 16
		}
		if i == 3 { // the third request's prompt is cached too; it shares more with it than with the second
			want = min(common(tokens(second), cur), len(cur)-1) / 16 * 16
		}
		got := 0
		if d := resp.Usage.PromptTokensDetails; d != nil {
			got = d.CachedTokens
		}
		if got != want {
			t.Errorf("request %d (%d prompt tokens): cached_tokens %d, want %d", i+1, len(cur), got, want)
		}
		if want == 0 && resp.Usage.PromptTokensDetails != nil {
			t.Errorf("request %d: prompt_tokens_details %+v, want null when nothing is cached (as vLLM)", i+1, resp.Usage.PromptTokensDetails)
		}
		if i > 0 && want == 0 {
			t.Errorf("request %d: the oracle expects no cache hit; the test would prove nothing", i+1)
		}
		recs := ts.sim.Stats().Completions()
		if r := recs[len(recs)-1]; r.CachedTokens != got || r.PromptTokens != len(cur) {
			t.Errorf("request %d: record %d of %d cached, response %d of %d", i+1, r.CachedTokens, r.PromptTokens, got, len(cur))
		}
		prev = cur
	}
	if p, c := ts.sim.Stats().PromptTokens(); c == 0 || c >= p {
		t.Errorf("Stats.PromptTokens: %d cached of %d", c, p)
	}

	// Without --enable-prompt-tokens-details the field stays null.
	plain := start(t, vllmsim.Config{})
	for range 2 {
		status, body := plain.post(t, "/v1/chat/completions", map[string]any{"model": plain.sim.Model(), "messages": first, "max_tokens": 64})
		if status != 200 || !bytes.Contains(body, []byte(`"prompt_tokens_details":null`)) {
			t.Fatalf("without PromptTokensDetails: %d %s", status, body)
		}
	}
	if r := plain.sim.Stats().Completions(); r[1].CachedTokens == 0 {
		t.Errorf("the record of a repeated request holds no cached tokens: %+v", r[1])
	}

	// Prefix caching disabled: nothing is ever cached.
	off := start(t, vllmsim.Config{CacheBlocks: -1, PromptTokensDetails: true})
	for range 2 {
		resp, err := off.chat(t, openai.ChatCompletionRequest{Messages: first, MaxCompletionTokens: 64})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage.PromptTokensDetails != nil {
			t.Errorf("caching disabled: prompt_tokens_details %+v", resp.Usage.PromptTokensDetails)
		}
	}
}

func TestPrefixCacheConfig(t *testing.T) {
	_, err := vllmsim.New(vllmsim.Config{Counter: newCounter(t), Policy: vllmsim.Repeater(""), MaxModelLen: 16384, CacheBlocks: 100})
	if err == nil {
		t.Fatal("a cache of 100 blocks for a 16384-token window was accepted")
	}
	_, err = vllmsim.New(vllmsim.Config{Counter: newCounter(t), Policy: vllmsim.Repeater(""), BlockSize: -16})
	if err == nil {
		t.Fatal("a negative block size was accepted")
	}
}
