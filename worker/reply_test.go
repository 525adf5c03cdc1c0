package worker

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatusErrorText: every error status go-openai reports reads "HTTP
// STATUS: MESSAGE", the message cut to 300 bytes, never go-openai's
// "message: %!s(<nil>)" nor a body of any length (it goes to the retry
// line and, once per try, to the journal); the server's typed answer stays
// in the chain for ServerError and the retry policy.
func TestStatusErrorText(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"vLLM's flat body", 503, `{"object":"error","message":"The server is overloaded, please retry later.","type":"ServiceUnavailableError","param":null,"code":503}`,
			"HTTP 503 Service Unavailable: The server is overloaded, please retry later."},
		{"nested body", 500, `{"error":{"message":"engine dead","type":"InternalServerError","param":null,"code":500}}`,
			"HTTP 500 Internal Server Error: engine dead"},
		{"JSON without a message", 502, `{"detail":"upstream"}`, `HTTP 502 Bad Gateway: {"detail":"upstream"}`},
		{"empty body", 502, ``, "HTTP 502 Bad Gateway: no message"},
		{"a proxy's page", 502, "<html>\n<head><title>502 Bad Gateway</title></head>\n</html>\n",
			"HTTP 502 Bad Gateway: <html> <head><title>502 Bad Gateway</title></head> </html>"},
		{"a 1 MiB message", 500, `{"error":{"message":"` + long + `"}}`, "HTTP 500 Internal Server Error: " + long[:297] + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := classify(errorFromResponse(t, tt.status, []byte(tt.body)), nil)
			var st *StatusError
			require.True(t, errors.As(err, &st), "%T: %v", err, err)
			assert.Equal(t, tt.want, err.Error())
			assert.Equal(t, tt.status, st.Status)
			assert.True(t, retryable(err))
			var reqErr *openai.RequestError
			var apiErr *openai.APIError
			assert.True(t, errors.As(err, &reqErr) || errors.As(err, &apiErr), "go-openai's error is kept")
		})
	}
}

// TestCheckReply: a decoded answer without choices is a ReplyError; which
// one says whether it looked like a chat completion at all.
func TestCheckReply(t *testing.T) {
	var re *ReplyError
	require.ErrorAs(t, CheckReply(openai.ChatCompletionResponse{ID: "c", Object: "chat.completion"}), &re)
	assert.Equal(t, ReplyNoChoices, re.Fault)
	require.ErrorAs(t, CheckReply(openai.ChatCompletionResponse{}), &re)
	assert.Equal(t, ReplyShape, re.Fault)
	assert.NoError(t, CheckReply(openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{}}}))
}

// errorFromResponse serves body with the status and returns the error
// go-openai makes of it.
func errorFromResponse(t *testing.T, status int, body []byte) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	defer srv.Close()
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = srv.URL + "/v1"
	_, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
	require.Error(t, err)
	return err
}

// TestParseContextLengthGoldenBodies reads every error body the vLLM
// simulator reproduces (testdata/vllm: each release's message forms, both
// JSON shapes) through go-openai's real error types: which are length
// rejections, of which kind, with which numbers. "max_tokens must be at
// least 1, got 0" (max_tokens 0 or, absent, defaulted to the 0 tokens left)
