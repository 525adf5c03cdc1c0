package faultserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/internal/faultserver"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// start serves faults in front of the vLLM simulator.
func start(t *testing.T, counter vllmsim.Counter, cfg faultserver.Config) (*faultserver.Server, string) {
	t.Helper()
	sim, err := vllmsim.New(vllmsim.Config{Counter: counter, Policy: vllmsim.Stubborn(vllmsim.StubbornConfig{})})
	require.NoError(t, err)
	cfg.Next = sim.Handler()
	s, err := faultserver.New(cfg)
	require.NoError(t, err)
	url, err := s.Start(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, url
}

const request = `{"model":"Qwen/Qwen3-8B","messages":[{"role":"user","content":"hello"}],"max_tokens":64}`

func post(ctx context.Context, url string) (*http.Response, []byte, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(request))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// completion is the part of a chat completion the checks read.
type completion struct {
	Object  string            `json:"object"`
	Choices []json.RawMessage `json:"choices"`
}

func newCounter(t *testing.T) vllmsim.Counter {
	t.Helper()
	m, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	require.NoError(t, err)
	counter := vllmsim.NewModelCounter(m)
	return counter
}

func TestFaults(t *testing.T) {
	counter := newCounter(t)
	tests := []struct {
		kind  faultserver.Kind
		check func(t *testing.T, resp *http.Response, body []byte, err error)
	}{
		{faultserver.Huge, func(t *testing.T, resp *http.Response, body []byte, err error) {
			require.NoError(t, err)
			assert.Equal(t, int64(-1), resp.ContentLength, "chunked, no length to refuse it by")
			var c struct {
				Choices []struct{ Message struct{ Content string } }
			}
			require.NoError(t, json.Unmarshal(body, &c))
			require.Len(t, c.Choices, 1)
			assert.Equal(t, strings.Repeat("a", 1<<20), c.Choices[0].Message.Content)
		}},
		{faultserver.HTML, func(t *testing.T, resp *http.Response, body []byte, err error) {
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, "text/html", resp.Header.Get("Content-Type"))
			assert.Contains(t, string(body), "<title>502 Bad Gateway</title>")
		}},
		{faultserver.WrongShape, func(t *testing.T, resp *http.Response, body []byte, err error) {
			require.NoError(t, err)
			var c completion
			var ute *json.UnmarshalTypeError
			assert.ErrorAs(t, json.Unmarshal(body, &c), &ute)
			assert.Contains(t, string(body), `"object":"chat.completion"`)
		}},
		{faultserver.Truncated, func(t *testing.T, resp *http.Response, body []byte, err error) {
			require.NoError(t, err, "a complete HTTP answer")
			assert.Equal(t, int64(len(body)), resp.ContentLength)
			var c completion
			var se *json.SyntaxError
			assert.ErrorAs(t, json.Unmarshal(body, &c), &se, "unexpected end of JSON input")
			assert.True(t, strings.HasPrefix(string(body), `{"id":"chatcmpl-`), "%s", body)
		}},
		{faultserver.EmptyChoices, func(t *testing.T, resp *http.Response, body []byte, err error) {
			require.NoError(t, err)
			var c completion
			require.NoError(t, json.Unmarshal(body, &c))
			assert.Equal(t, "chat.completion", c.Object)
			assert.NotNil(t, c.Choices)
			assert.Empty(t, c.Choices)
		}},
		{faultserver.Hang, func(t *testing.T, resp *http.Response, body []byte, err error) {
			assert.ErrorIs(t, err, context.DeadlineExceeded)
		}},
		{faultserver.Drip, func(t *testing.T, resp *http.Response, body []byte, err error) {
			require.NotNil(t, resp, "the headers come at once")
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.NotEmpty(t, body)
			assert.Less(t, len(body), 40, "a few bytes in 300ms at one per 20ms: %q", body)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			s, url := start(t, counter, faultserver.Config{Faults: []faultserver.Fault{{Kind: tt.kind, Times: 2}},
				HugeBytes: 1 << 20, DripEvery: 20 * time.Millisecond})
			for i := range 2 {
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				resp, body, err := post(ctx, url)
				cancel()
				tt.check(t, resp, body, err)
				assert.Equal(t, faultserver.Stats{Faults: i + 1}, s.Stats())
			}
			// Then vLLM's answer.
			resp, body, err := post(context.Background(), url)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			var c completion
			require.NoError(t, json.Unmarshal(body, &c))
			assert.Len(t, c.Choices, 1)
			assert.Equal(t, faultserver.Stats{Faults: 2, Normal: 1}, s.Stats())
			// Other endpoints are the simulator's.
			mr, err := http.Get(url + "/v1/models")
			require.NoError(t, err)
			mr.Body.Close()
			assert.Equal(t, http.StatusOK, mr.StatusCode)
		})
	}
}

// Close ends a hanging answer: the client sees its connection end, long
// before its own timeout.
func TestCloseEndsHang(t *testing.T) {
	s, url := start(t, newCounter(t), faultserver.Config{Faults: []faultserver.Fault{{Kind: faultserver.Hang}}})
	errc := make(chan error, 1)
	go func() {
		_, _, err := post(context.Background(), url)
		errc <- err
	}()
	require.Eventually(t, func() bool { return s.Stats().Faults == 1 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, s.Close())
	select {
	case err := <-errc:
		assert.Error(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("a hanging answer outlived Close")
	}
	require.NoError(t, s.Close(), "idempotent")
}

func TestConfig(t *testing.T) {
	next := http.NotFoundHandler()
	for _, cfg := range []faultserver.Config{
		{},
		{Next: next, Faults: []faultserver.Fault{{Kind: 0}}},
		{Next: next, Faults: []faultserver.Fault{{Kind: faultserver.Hang, Times: -1}}},
		{Next: next, HugeBytes: -1},
	} {
		_, err := faultserver.New(cfg)
		assert.True(t, errors.Is(err, faultserver.ErrConfig), "%+v: %v", cfg, err)
	}
	for k := faultserver.Huge; k <= faultserver.EmptyChoices; k++ {
		got, err := faultserver.ParseKind(k.String())
		require.NoError(t, err)
		assert.Equal(t, k, got)
	}
	_, err := faultserver.ParseKind("slow")
	assert.EqualError(t, err, `faultserver: invalid configuration: unknown fault "slow" (want huge, html, wrong-shape, truncated, hang, drip or empty-choices)`)
}
