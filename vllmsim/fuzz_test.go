package vllmsim_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/vllmsim"
)

// FuzzRequests: any body sent to the chat and tokenize endpoints gets a JSON
// answer, never a panic.
func FuzzRequests(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"model":"Qwen/Qwen3-8B","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"Qwen/Qwen3-8B","messages":[{"role":"system","content":"Rule: x\nAttempt: -3"},{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"ssh_apply","arguments":"{"}}]}],"max_tokens":-4}`,
		`{"prompt":"a"}`, `{"messages":[],"add_generation_prompt":false}`, `{"model":"Qwen/Qwen3-8B","messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"max_completion_tokens":3}`} {
		f.Add(s)
	}
	sim, err := vllmsim.New(vllmsim.Config{Counter: newCounter(f), Policy: vllmsim.Malformed(1), MaxModelLen: 64})
	if err != nil {
		f.Fatal(err)
	}
	h := sim.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/v1/chat/completions", "/tokenize"} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("POST", path, strings.NewReader(body)))
			if !json.Valid(w.Body.Bytes()) {
				t.Fatalf("%s: status %d, body %q not JSON", path, w.Code, w.Body.String())
			}
		}
	})
}
