package served

import (
	"fmt"
	"os"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	openai "github.com/sashabaranov/go-openai"
	"golang.org/x/text/unicode/norm"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/served/bpe"
)

// conversation16K builds a realistic ≈16K-token conversation from the tool
// outputs in testdata/outputs.
func conversation16K(b *testing.B, c *ChatCounter) []openai.ChatCompletionMessage {
	b.Helper()
	outs := []string{"apt-get-install-dpkg-lock.txt", "aide-config-error.txt", "sshd-t-errors.txt", "dpkg-configure-a.txt", "journalctl-u-ssh.txt", "find-permission-denied.txt"}
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "Rule: aide_build_database\nBanned commands: rm -rf /, reboot, mkfs, iptables -F"},
		{Role: "user", Content: "Make the host compliant with aide_build_database."},
	}
	for i := 0; ; i++ {
		out, err := os.ReadFile("../testdata/outputs/" + outs[i%len(outs)])
		if err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: id, Type: "function",
				Function: openai.FunctionCall{Name: "ssh_apply", Arguments: fmt.Sprintf(`{"command": "aide --init # %d"}`, i)}}}},
			openai.ChatCompletionMessage{Role: "tool", ToolCallID: id, Content: string(out)},
			openai.ChatCompletionMessage{Role: "user", Content: fmt.Sprintf("Re-check after attempt %d: FAIL (exit 1).\nAttempt: %d", i+1, i+2)})
		pc, err := c.Count(msgs, nil)
		if err != nil {
			b.Fatal(err)
		}
		if pc.Total >= 15500 {
			return msgs
		}
	}
}

// BenchmarkReassess measures re-assessing a 16K-token conversation after one
// new message (different every iteration, so it is never a cache hit):
// render, split, look up every unchanged piece, tokenize the new one. Beside
// it, counting the same render from scratch with this tokenizer and with
// pkoukk/tiktoken-go (NFC pre-pass, same vocabulary and pattern).
func BenchmarkReassess(b *testing.B) {
	m, err := loadFiles("qwen3", BackendGo)
	if err != nil {
		b.Fatal(err)
	}
	c, err := NewChatCounter(m.Tokenizer, m.ChatTemplate)
	if err != nil {
		b.Fatal(err)
	}
	bud, err := budget.New(budget.Config{})
	if err != nil {
		b.Fatal(err)
	}
	base := conversation16K(b, c)
	if _, err := c.Count(base, nil); err != nil {
		b.Fatal(err)
	}
	text, _ := c.Render(base, nil)
	b.Logf("conversation: %d messages, %d bytes rendered, %d tokens", len(base), len(text), m.Tokenizer.Count(text))
	split := budget.Split{SystemEnd: 2, CurrentStart: len(base) - 3}
	msgs := append(base[:len(base):len(base)], openai.ChatCompletionMessage{})

	b.Run("incremental", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			msgs[len(msgs)-1] = openai.ChatCompletionMessage{Role: "user", Content: fmt.Sprintf("Warning: this exact command was tried %d times before.", i)}
			if _, err := bud.Assess(c, msgs, nil, split); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("full-recount", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			m.Tokenizer.Count(text)
		}
	})
	b.Run("tiktoken-go-full-recount", func(b *testing.B) {
		ranks := map[string]int{}
		specials := map[string]int{}
		allowed := map[string]any{}
		added := map[int]bool{}
		bt := m.Tokenizer.(*bpe.Tokenizer)
		for _, a := range bt.AddedTokens() {
			specials[a.Content], allowed[a.Content], added[a.ID] = a.ID, true, true
		}
		for id := range bt.VocabSize() {
			if !added[id] {
				ranks[string(bt.TokenBytes(id))] = id
			}
		}
		core, err := tiktoken.NewCoreBPE(ranks, specials, `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`)
		if err != nil {
			b.Fatal(err)
		}
		tk := tiktoken.NewTiktoken(core, nil, allowed)
		b.ReportAllocs()
		b.SetBytes(int64(len(text)))
		b.ResetTimer()
		for b.Loop() {
			tk.Encode(norm.NFC.String(text), []string{"all"}, nil)
		}
	})
}
