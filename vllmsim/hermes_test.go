package vllmsim

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// TestHermesArguments compares the arguments parseHermes re-serialises with
// outputs of CPython's json.dumps(json.loads(in), ensure_ascii=False).
func TestHermesArguments(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"command": "ls", "reason": "a"}`, `{"command": "ls", "reason": "a"}`},
		{`{"b":1,"a":[1,2,{"x":null}],"c":true}`, `{"b": 1, "a": [1, 2, {"x": null}], "c": true}`},
		{`{"s":"<tag> & \u2028 \u00e9 \u0001 \t \"q\" \\"}`, "{\"s\": \"<tag> & \u2028 é \\u0001 \\t \\\"q\\\" \\\\\"}"},
		{`"just a string"`, `"just a string"`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		// A dict keeps a repeated key at its first position with its last value.
		{` {"dup": 1, "x": 0, "dup": 2} `, `{"dup": 2, "x": 0}`},
		{`{"f": 1.50, "e": 1E5, "big": 12345678901234567890}`, `{"f": 1.5, "e": 100000.0, "big": 12345678901234567890}`},
	} {
		_, calls := parseHermes(`<tool_call>{"name": "a", "arguments": ` + tc.in + `}</tool_call>`)
		if len(calls) != 1 {
			t.Fatalf("%s: %d calls, want 1", tc.in, len(calls))
		}
		if got := calls[0].Arguments; got != tc.want {
			t.Errorf("arguments %s = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestPyDumpsArgs: a policy's arguments are written in order, as json.dumps
// writes a dict (no HTML escaping, ", " and ": " separators).
func TestPyDumpsArgs(t *testing.T) {
	got := pyDumps(Args{{"command", "a<b && c > \"d\"\n"}, {"n", 3}, {"ok", true}, {"x", nil}, {"é", []string{"1"}}})
	want := `{"command": "a<b && c > \"d\"\n", "n": 3, "ok": true, "x": null, "é": ["1"]}`
	if got != want {
		t.Errorf("pyDumps = %s, want %s", got, want)
	}
	if got := pyDumps(Args{{"bad", make(chan int)}}); got != "null" {
		t.Errorf("unmarshalable value: %s, want null", got)
	}
}

func TestParseHermes(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name    string
		in      string
		content *string
		calls   []parsedCall
	}{
		{"plain text", "Hello.", str("Hello."), nil},
		{"one call", "<tool_call>\n{\"name\": \"ssh_apply\", \"arguments\": {\"command\":\"id\"}}\n</tool_call>", nil,
			[]parsedCall{{"ssh_apply", `{"command": "id"}`}}},
		{"text then calls", "Let me look.\n<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": null}</tool_call>", str("Let me look.\n"),
			[]parsedCall{{"a", `{}`}, {"b", `null`}}},
		{"unclosed but complete", "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n", nil, []parsedCall{{"a", `{"x": 1}`}}},
		{"unclosed truncated", "<tool_call>\n{\"name\": \"a\", \"argu", str("<tool_call>\n{\"name\": \"a\", \"argu"), nil},
		{"invalid json", "<tool_call>{'name': 'a'}</tool_call>", str("<tool_call>{'name': 'a'}</tool_call>"), nil},
		{"no arguments key", "<tool_call>{\"name\": \"a\"}</tool_call>", str("<tool_call>{\"name\": \"a\"}</tool_call>"), nil},
		{"name not a string", "<tool_call>{\"name\": 1, \"arguments\": {}}</tool_call>", str("<tool_call>{\"name\": 1, \"arguments\": {}}</tool_call>"), nil},
		{"not an object", "<tool_call>[1]</tool_call>", str("<tool_call>[1]</tool_call>"), nil},
		{"empty block", "<tool_call></tool_call>", str("<tool_call></tool_call>"), nil},
		{"one bad of two", "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call>x</tool_call>", str("<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call>x</tool_call>"), nil},
		{"trailing data", "<tool_call>{\"name\": \"a\", \"arguments\": {}} extra</tool_call>", str("<tool_call>{\"name\": \"a\", \"arguments\": {}} extra</tool_call>"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content, calls := parseHermes(tc.in)
			if (content == nil) != (tc.content == nil) || (content != nil && *content != *tc.content) {
				t.Errorf("content %v, want %v", deref(content), deref(tc.content))
			}
			if len(calls) != len(tc.calls) {
				t.Fatalf("calls %+v, want %+v", calls, tc.calls)
			}
			for i := range calls {
				if calls[i] != tc.calls[i] {
					t.Errorf("call %d %+v, want %+v", i, calls[i], tc.calls[i])
				}
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestRenderRoundTrip: what a policy generates comes back unchanged through
// the parser.
func TestRenderRoundTrip(t *testing.T) {
	g := Generation{Text: "x", Calls: []Call{Apply("printf '%s\\n' \"a\tb\" | tee /tmp/x", "why <not>"), GiveUpCall("done"), {Name: "n", Args: Args{{"i", 3}, {"b", true}, {"z", nil}, {"l", []string{"a"}}}}}}
	content, calls := parseHermes(renderGeneration(g))
	if deref(content) != "x\n" || len(calls) != 3 {
		t.Fatalf("content %q calls %+v", deref(content), calls)
	}
	var a struct{ Command, Reason string }
	if err := json.Unmarshal([]byte(calls[0].Arguments), &a); err != nil || a.Command != "printf '%s\\n' \"a\tb\" | tee /tmp/x" || a.Reason != "why <not>" {
		t.Errorf("arguments %s: %v", calls[0].Arguments, err)
	}
	if calls[2].Arguments != `{"i": 3, "b": true, "z": null, "l": ["a"]}` {
		t.Errorf("arguments %s", calls[2].Arguments)
	}
}

// FuzzParseHermes: the parser never panics, every call it returns has valid
// JSON arguments, and content without calls is the whole output.
func FuzzParseHermes(f *testing.F) {
	for _, s := range []string{"", "hi", "<tool_call>", "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>",
		"a<tool_call>{\"name\":\"a\",\"arguments\":[1,{\"b\":\"\\u0000\"}]}", "<tool_call></tool_call></tool_call>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		content, calls := parseHermes(out)
		if len(calls) == 0 {
			if content == nil || *content != out {
				t.Fatalf("no calls but content %v", deref(content))
			}
			return
		}
		if content != nil && !strings.HasPrefix(out, *content) {
			t.Fatalf("content %q is not a prefix", *content)
		}
		for _, c := range calls {
			if !json.Valid([]byte(c.Arguments)) {
				t.Fatalf("arguments %q not JSON", c.Arguments)
			}
		}
	})
}

// byteCounter counts one token per byte (enough to check truncation).
type byteCounter struct{}

func (byteCounter) CountChat(openai.ChatCompletionRequest) (int, error) { return 0, nil }
func (byteCounter) EncodeChat(openai.ChatCompletionRequest, bool) ([]int, error) {
	return nil, nil
}
func (byteCounter) Encode(s string) []int { return make([]int, len(s)) }
func (byteCounter) Count(s string) int    { return len(s) }

func TestTruncate(t *testing.T) {
	s, err := New(Config{Counter: byteCounter{}, Policy: Script()})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("abcdé€😀", 500)
	for _, tc := range []struct {
		text   string
		budget int
	}{
		{"hello", 0}, {"hello", 3}, {"hello", 5}, {"hello", 9}, {"é", 1}, {"😀x", 3}, {"😀x", 4},
		{long, 1}, {long, 17}, {long, 1000}, {long, len(long) - 1}, {long, len(long)},
	} {
		got := s.truncate(tc.text, tc.budget)
		if !strings.HasPrefix(tc.text, got) || len(got) > tc.budget {
			t.Errorf("truncate(%d bytes, %d) = %d bytes", len(tc.text), tc.budget, len(got))
			continue
		}
		// Maximal: the next rune would not fit.
		if rest := tc.text[len(got):]; rest != "" {
			_, size := utf8.DecodeRuneInString(rest)
			if len(got)+size <= tc.budget {
				t.Errorf("truncate(%d bytes, %d) = %d bytes, not maximal", len(tc.text), tc.budget, len(got))
			}
		}
	}
}
