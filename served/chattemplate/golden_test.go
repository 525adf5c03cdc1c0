package chattemplate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// The golden files are made by Python's Jinja2 and the HF tokenizers, not by
// this package, so there is no -update flag. Regenerate them with:
const regenerate = "python3 scripts/render-chat.py && node scripts/count-chat.js"

var chatDir = filepath.Join("..", "..", "testdata", "chat")

// goldenRequest is one line of testdata/chat/conversations.jsonl: a request as
// go-openai puts it on the wire, and the template options it is rendered with.
type goldenRequest struct {
	ID       int             `json:"id"`
	Messages json.RawMessage `json:"messages"`
	Tools    json.RawMessage `json:"tools"`
	Options  struct {
		AddGenerationPrompt bool  `json:"add_generation_prompt"`
		EnableThinking      *bool `json:"enable_thinking"`
	} `json:"options"`
}

type goldenRender struct {
	ID     int    `json:"id"`
	Text   string `json:"text"`
	Tokens int    `json:"tokens"`
}

type goldenCase struct {
	id       int
	messages []openai.ChatCompletionMessage
	tools    []openai.Tool
	opt      Options
	wire     goldenRequest
}

func readJSONLines(t testing.TB, name string, each func(line []byte)) {
	t.Helper()
	f, err := os.Open(filepath.Join(chatDir, name))
	if err != nil {
		t.Fatalf("golden file missing (regenerate with %q): %v", regenerate, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			each(sc.Bytes())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
}

// decodeTools decodes tools keeping each function's parameters as raw JSON,
// so that go-openai sends them with their key order (a map would be sorted).
func decodeTools(t testing.TB, raw json.RawMessage) []openai.Tool {
	t.Helper()
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var wire []struct {
		Type     openai.ToolType `json:"type"`
		Function *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Strict      bool            `json:"strict"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		t.Fatalf("decode tools: %v", err)
	}
	tools := make([]openai.Tool, len(wire))
	for i, w := range wire {
		tools[i] = openai.Tool{Type: w.Type}
		if w.Function != nil {
			tools[i].Function = &openai.FunctionDefinition{Name: w.Function.Name,
				Description: w.Function.Description, Strict: w.Function.Strict, Parameters: w.Function.Parameters}
		}
	}
	return tools
}

func loadGoldenCases(t testing.TB) []goldenCase {
	t.Helper()
	var cases []goldenCase
	readJSONLines(t, "conversations.jsonl", func(line []byte) {
		var r goldenRequest
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("decode conversation: %v", err)
		}
		c := goldenCase{id: r.ID, tools: decodeTools(t, r.Tools), wire: r,
			opt: Options{AddGenerationPrompt: r.Options.AddGenerationPrompt, EnableThinking: r.Options.EnableThinking}}
		if err := json.Unmarshal(r.Messages, &c.messages); err != nil {
			t.Fatalf("conversation %d: decode messages: %v", r.ID, err)
		}
		cases = append(cases, c)
	})
	if len(cases) < 400 {
		t.Fatalf("only %d golden conversations; regenerate with %q", len(cases), regenerate)
	}
	return cases
}

func loadGoldenRenders(t testing.TB, f Family) map[int]goldenRender {
	t.Helper()
	out := map[int]goldenRender{}
	readJSONLines(t, f.String()+".golden.jsonl", func(line []byte) {
		var g goldenRender
		if err := json.Unmarshal(line, &g); err != nil {
			t.Fatalf("decode %s golden: %v", f, err)
		}
		out[g.ID] = g
	})
	return out
}

// sameJSON reports whether a and b are the same JSON value (numbers compared
// by their text).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	decode := func(p []byte) any {
		d := json.NewDecoder(bytes.NewReader(p))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("decode %s: %v", p, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

// TestGoldenWire checks that the Go values the golden test renders are the
// requests the Python script rendered: go-openai marshals them to the same JSON.
func TestGoldenWire(t *testing.T) {
	t.Parallel()
	for _, c := range loadGoldenCases(t) {
		got, err := json.Marshal(c.messages)
		if err != nil {
			t.Fatalf("conversation %d: marshal messages: %v", c.id, err)
		}
		if !sameJSON(t, got, c.wire.Messages) {
			t.Errorf("conversation %d: go-openai sends messages\n%s\nnot\n%s", c.id, got, c.wire.Messages)
		}
		if c.tools == nil {
			continue
		}
		got, err = json.Marshal(c.tools)
		if err != nil {
			t.Fatalf("conversation %d: marshal tools: %v", c.id, err)
		}
		if !sameJSON(t, got, c.wire.Tools) {
			t.Errorf("conversation %d: go-openai sends tools\n%s\nnot\n%s", c.id, got, c.wire.Tools)
		}
	}
}

// TestGoldenRenders renders every golden conversation with both families and
// compares with Jinja2's render byte for byte.
func TestGoldenRenders(t *testing.T) {
	t.Parallel()
	cases := loadGoldenCases(t)
	for _, f := range []Family{Qwen25, Qwen3} {
		t.Run(f.String(), func(t *testing.T) {
			golden := loadGoldenRenders(t, f)
			if len(golden) != len(cases) {
				t.Fatalf("%d renders for %d conversations; regenerate with %q", len(golden), len(cases), regenerate)
			}
			failed := 0
			for _, c := range cases {
				g, ok := golden[c.id]
				if !ok {
					t.Fatalf("conversation %d has no golden render", c.id)
				}
				r, err := Render(f, c.messages, c.tools, c.opt)
				if err != nil {
					t.Errorf("conversation %d: %v", c.id, err)
					continue
				}
				if r.Text != g.Text {
					failed++
					if failed <= 5 {
						t.Errorf("conversation %d differs from Jinja2:\n%s", c.id, firstDiff(r.Text, g.Text))
					}
				}
				checkStarts(t, c.id, c.messages, r)
			}
			if failed > 0 {
				t.Errorf("%d of %d renders differ", failed, len(cases))
			}
		})
	}
}

// checkStarts checks Rendered.Starts: one per message, from 0, non-decreasing,
// within the text, and each rendered message part opening as the template
// opens it.
func checkStarts(t *testing.T, id int, msgs []openai.ChatCompletionMessage, r Rendered) {
	t.Helper()
	if len(r.Starts) != len(msgs) {
		t.Fatalf("conversation %d: %d starts for %d messages", id, len(r.Starts), len(msgs))
	}
	if r.Starts[0] != 0 {
		t.Errorf("conversation %d: Starts[0] = %d", id, r.Starts[0])
	}
	for i := 1; i < len(r.Starts); i++ {
		s := r.Starts[i]
		if s < r.Starts[i-1] || s > len(r.Text) {
			t.Fatalf("conversation %d: Starts = %v out of order or range (len %d)", id, r.Starts, len(r.Text))
		}
		rest := r.Text[s:]
		switch msgs[i].Role {
		case roleUser, roleSystem, roleAssistant:
			if !strings.HasPrefix(rest, imStart+msgs[i].Role) {
				t.Errorf("conversation %d: message %d (%s) starts at %q", id, i, msgs[i].Role, clip(rest))
			}
		case roleTool:
			if !strings.HasPrefix(rest, "<|im_start|>user\n<tool_response>\n") && !strings.HasPrefix(rest, "\n<tool_response>\n") {
				t.Errorf("conversation %d: message %d (tool) starts at %q", id, i, clip(rest))
			}
		default:
			if i+1 < len(r.Starts) && r.Starts[i+1] != s {
				t.Errorf("conversation %d: message %d (role %q) has a non-empty part", id, i, msgs[i].Role)
			}
		}
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-80)
	return "at byte " + itoa(i) + "\n got: " + quoteClip(got[lo:], 160) + "\nwant: " + quoteClip(want[lo:], 160)
}

func quoteClip(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
