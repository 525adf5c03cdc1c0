package budget_test

import (
	"context"
	"errors"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// TestVLLMClientAgainstSimulator reads max_model_len and cross-checks a local
// count against /tokenize over real HTTP, served by the vLLM simulator.
func TestVLLMClientAgainstSimulator(t *testing.T) {
	m, err := budget.LoadModel("qwen3")
	if err != nil {
		t.Fatal(err)
	}
	counter, err := vllmsim.NewBudgetCounter(m)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := vllmsim.New(vllmsim.Config{Model: "Qwen/Qwen3-8B", MaxModelLen: 16384, Counter: counter, Policy: vllmsim.GiveUp(1, "")})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := srv.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c, err := budget.NewVLLMClient(budget.VLLMConfig{BaseURL: url + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	served, err := c.Model(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if served.ID != "Qwen/Qwen3-8B" || served.MaxModelLen != 16384 {
		t.Fatalf("served model %+v", served)
	}
	if _, err := c.Model(ctx, "nope"); !errors.Is(err, budget.ErrNoModel) {
		t.Fatalf("unknown model: got %v, want ErrNoModel", err)
	}
	req := openai.ChatCompletionRequest{Model: served.ID, Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "Rule: accounts_tmout"},
		{Role: "user", Content: "Set TMOUT=900 in /etc/profile.d/tmout.sh — naïve café 日本語 🚀"},
	}}
	res, err := c.TokenizeChat(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := budget.NewModelChatCounter(m)
	if err != nil {
		t.Fatal(err)
	}
	local, err := cc.CountRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Count != local || res.MaxModelLen != 16384 || len(res.Tokens) != local {
		t.Fatalf("/tokenize says %d tokens (max_model_len %d), local count %d", res.Count, res.MaxModelLen, local)
	}
	text, err := c.TokenizeText(ctx, served.ID, "sshd -t && systemctl reload ssh")
	if err != nil {
		t.Fatal(err)
	}
	if want := m.Tokenizer.Count("sshd -t && systemctl reload ssh"); text.Count != want {
		t.Fatalf("/tokenize prompt form: %d, local %d", text.Count, want)
	}
}

func TestVLLMClientErrors(t *testing.T) {
	if _, err := budget.NewVLLMClient(budget.VLLMConfig{BaseURL: "localhost:8000"}); err == nil {
		t.Fatal("a relative base URL was accepted")
	}
	c, err := budget.NewVLLMClient(budget.VLLMConfig{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Models(context.Background()); err == nil {
		t.Fatal("no error from a closed port")
	}
}
