package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/nightshift-dev/nightshift/distill"

	"github.com/nightshift-dev/nightshift"
)

// DefaultNamespace prefixes every metric name when Config.Namespace is empty.
const DefaultNamespace = "nightshift"

// defaultPromptTokenBuckets are the prompt-size buckets: around the usual
// context windows (8K, 16K, 32K, 128K).
var defaultPromptTokenBuckets = []float64{512, 1024, 2048, 4096, 6144, 8192, 10240, 12288, 14336, 16384, 24576, 32768, 65536, 131072}

// defaultLatencyBuckets run from 10 ms to about 11 minutes.
var defaultLatencyBuckets = prometheus.ExponentialBuckets(0.01, 2, 17)

// DefaultPromptTokenBuckets returns the prompt-token buckets used when
// Config.PromptTokenBuckets is nil.
func DefaultPromptTokenBuckets() []float64 {
	return append([]float64(nil), defaultPromptTokenBuckets...)
}

// DefaultLatencyBuckets returns the latency buckets, in seconds, used when
// Config.LatencyBuckets is nil.
func DefaultLatencyBuckets() []float64 { return append([]float64(nil), defaultLatencyBuckets...) }

// ErrConfig is wrapped by New's errors.
var ErrConfig = errors.New("invalid metrics configuration")

// Config configures Metrics. The zero value is usable.
type Config struct {
	// Namespace prefixes the metric names; empty means DefaultNamespace.
	Namespace string
	// ConstLabels are added to every metric (e.g. {"run": "nightly"}).
	ConstLabels prometheus.Labels
	// PromptTokenBuckets are the prompt-token histogram's upper bounds; nil
	// means DefaultPromptTokenBuckets().
	PromptTokenBuckets []float64
	// LatencyBuckets are the latency histograms' upper bounds in seconds;
	// nil means DefaultLatencyBuckets().
	LatencyBuckets []float64
	// NoRuntime leaves out the Go runtime and process collectors, which are
	// registered by default.
	NoRuntime bool
	// Now is the clock the Model and Target wrappers time calls with; nil
	// means time.Now.
	Now func() time.Time
}

// Metrics holds Nightshift's Prometheus metrics in a registry of its own.
// It is a nightshift.Observer; see the package comment for the metrics.
type Metrics struct {
	reg *prometheus.Registry
	now func() time.Time

	attempts    *prometheus.CounterVec
	rules       *prometheus.CounterVec
	fixes       prometheus.Counter
	rejections  prometheus.Counter
	retries     prometheus.Counter
	commands    *prometheus.CounterVec
	inProgress  prometheus.Gauge
	promptToks  prometheus.Histogram
	usagePrompt prometheus.Counter
	usageCached prometheus.Counter
	modelLat    *prometheus.HistogramVec
	commandLat  *prometheus.HistogramVec
	fallbacks   *prometheus.CounterVec
}

// New returns Metrics registered in a new registry.
func New(cfg Config) (*Metrics, error) {
	if cfg.Namespace == "" {
		cfg.Namespace = DefaultNamespace
	}
	if cfg.PromptTokenBuckets == nil {
		cfg.PromptTokenBuckets = DefaultPromptTokenBuckets()
	}
	if cfg.LatencyBuckets == nil {
		cfg.LatencyBuckets = DefaultLatencyBuckets()
	}
	for name, b := range map[string][]float64{"PromptTokenBuckets": cfg.PromptTokenBuckets, "LatencyBuckets": cfg.LatencyBuckets} {
		for i := 1; i < len(b); i++ {
			if !(b[i] > b[i-1]) {
				return nil, fmt.Errorf("%w: %s must increase, %v does not", ErrConfig, name, b)
			}
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ns, cl := cfg.Namespace, cfg.ConstLabels
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		now: cfg.Now,
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "attempts_total", ConstLabels: cl,
			Help: "Attempts ended, by the re-check's result (pass, fail, error, give_up; none when no command ran)."}, []string{"result"}),
		rules: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "rules_total", ConstLabels: cl,
			Help: "Rules ended on a host, by outcome (compliant, fixed, not_fixed, gave_up, ...)."}, []string{"status"}),
		fixes: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "fixes_total", ConstLabels: cl,
			Help: "Rules fixed: the re-check passed after an attempt."}),
		rejections: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "context_rejections_total", ConstLabels: cl,
			Help: "Model calls the server rejected for the prompt's length."}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "model_retries_total", ConstLabels: cl,
			Help: "Model calls that failed and were retried."}),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "commands_total", ConstLabels: cl,
			Help: "Tool calls handled, by action (ran, blocked, refused, malformed, timed_out, unknown, give_up)."}, []string{"action"}),
		inProgress: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "rules_in_progress", ConstLabels: cl,
			Help: "Rules being worked on now."}),
		promptToks: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "prompt_tokens", ConstLabels: cl,
			Help: "Prompt tokens of each model call, counted as the server counts them.", Buckets: cfg.PromptTokenBuckets}),
		usagePrompt: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "usage_prompt_tokens_total", ConstLabels: cl,
			Help: "Prompt tokens of the model calls answered, as the server's usage reports them."}),
		usageCached: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "usage_cached_prompt_tokens_total", ConstLabels: cl,
			Help: "Prompt tokens the server's prefix cache served (usage.prompt_tokens_details.cached_tokens; vLLM reports it with --enable-prompt-tokens-details)."}),
		modelLat: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "model_call_duration_seconds", ConstLabels: cl,
			Help: "Latency of model server calls (each try), by result (ok, error).", Buckets: cfg.LatencyBuckets}, []string{"result"}),
		commandLat: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "host_command_duration_seconds", ConstLabels: cl,
			Help:    "Latency of commands run on hosts (remediations, checks and probes), by result (ok: an exit status came back; error: outcome unknown).",
			Buckets: cfg.LatencyBuckets}, []string{"result"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "distill_fallbacks_total", ConstLabels: cl,
			Help: "Summary lines the model distiller (--distiller model) left to the deterministic distiller, by reason (request: failed or timed out; empty; oversize: several lines or over the line budget; claim: success the re-check did not confirm)."},
			[]string{"reason"}),
	}
	cs := []prometheus.Collector{m.attempts, m.rules, m.fixes, m.rejections, m.retries, m.commands, m.inProgress, m.promptToks, m.usagePrompt, m.usageCached, m.modelLat, m.commandLat, m.fallbacks}
	if !cfg.NoRuntime {
		cs = append(cs, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	// Series that exist before the first event, so rates start at zero.
	for _, r := range []string{nightshift.CheckPass.String(), nightshift.CheckFail.String(), nightshift.CheckError.String(), nightshift.ActionGiveUp.String(), "none"} {
		m.attempts.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "error"} {
		m.modelLat.WithLabelValues(r)
		m.commandLat.WithLabelValues(r)
	}
	for _, r := range distill.FallbackReasons() {
		m.fallbacks.WithLabelValues(r.String())
	}
	return m, nil
}

// Registry returns the registry the metrics are in, to add others or to
// gather them.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Serve serves the metrics at /metrics on ln until ctx is done, then shuts
// the server down (waiting at most 5 seconds for scrapes in flight) and
// returns nil. Other errors of the server are returned.
func (m *Metrics) Serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve metrics on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down metrics server: %w", err)
	}
	<-done
	return nil
}

// Observe counts one worker event.
func (m *Metrics) Observe(e nightshift.Event) {
	switch e.Kind {
	case nightshift.EventRuleStart:
		m.inProgress.Inc()
	case nightshift.EventRuleEnd:
		m.inProgress.Dec()
		if e.Outcome != nil && e.Outcome.Status != nightshift.RuleNone {
			m.rules.WithLabelValues(e.Outcome.Status.String()).Inc()
			if e.Outcome.Status == nightshift.RuleFixed {
				m.fixes.Inc()
			}
		}
	case nightshift.EventAttempt:
		m.attempts.WithLabelValues(attemptLabel(e)).Inc()
	case nightshift.EventModelCall:
		if e.Assessment != nil {
			m.promptToks.Observe(float64(e.Assessment.Prompt))
		}
	case nightshift.EventModelUsage:
		m.usagePrompt.Add(float64(e.UsagePrompt))
		m.usageCached.Add(float64(e.CachedTokens))
	case nightshift.EventRejected:
		m.rejections.Inc()
	case nightshift.EventRetry:
		m.retries.Inc()
	case nightshift.EventCommand:
		if e.Action != nightshift.ActionNone {
			m.commands.WithLabelValues(e.Action.String()).Inc()
		}
	case nightshift.EventDistillFallback:
		if e.Fallback != "" {
			m.fallbacks.WithLabelValues(e.Fallback).Inc()
		}
	default:
		// nightshift.EventCheck and unknown kinds: nothing to count
	}
}

// attemptLabel is an attempt's result label: the re-check's status, give_up
// when the model gave up, none when no check ran.
func attemptLabel(e nightshift.Event) string {
	switch {
	case e.Action == nightshift.ActionGiveUp:
		return nightshift.ActionGiveUp.String()
	case e.Check == nightshift.CheckNotRun:
		return "none"
	default:
		return e.Check.String()
	}
}

// ChatModel is a model client: package worker's Config.Model.
type ChatModel interface {
	CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// Model wraps a model client so that each call's latency is observed.
func (m *Metrics) Model(inner ChatModel) ChatModel { return timedModel{m, inner} }

// Target wraps a host's runner so that each command's latency is observed.
func (m *Metrics) Target(inner nightshift.Runner) nightshift.Runner { return timedTarget{m, inner} }

type timedModel struct {
	m     *Metrics
	inner ChatModel
}

func (t timedModel) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	start := t.m.now()
	resp, err := t.inner.CreateChatCompletion(ctx, req)
	t.m.modelLat.WithLabelValues(result(err)).Observe(t.m.now().Sub(start).Seconds())
	return resp, err
}

type timedTarget struct {
	m     *Metrics
	inner nightshift.Runner
}

func (t timedTarget) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	start := t.m.now()
	ex, err := t.inner.Run(ctx, command)
	t.m.commandLat.WithLabelValues(result(err)).Observe(t.m.now().Sub(start).Seconds())
	return ex, err
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
