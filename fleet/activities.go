package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/lockout"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/scap"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// Error types of activity failures the workflows match on.
const (
	errTypeModelRejected = "ModelRejected" // a model answer that retrying cannot change (4xx, context length)
	errTypeBanned        = "Banned"        // a check command the ban list refuses
	errTypeNoModel       = "NoModel"       // this worker serves no model calls
)

// probeInput is a read-only command of the host probe.
type probeInput struct {
	Host    inventory.Host `json:"host"`
	Command string         `json:"command"`
}

// checkInput is a rule's check on a host: its shell command, or (Oscap
// set) an oscap evaluation.
type checkInput struct {
	Host    inventory.Host `json:"host"`
	Rule    string         `json:"rule"`
	Command string         `json:"command"`
	Oscap   *oscapInput    `json:"oscap,omitempty"`
}

// commandInput is one remediation command.
type commandInput struct {
	Host    inventory.Host `json:"host"`
	Rule    string         `json:"rule"`
	Attempt int            `json:"attempt"`
	Command string         `json:"command"`
	// Sandbox runs the command first in the recording sandbox and applies
	// only the effects safety.JudgeEffects allows (the Exec's Evidence
	// says what it did); Scope is the rule's declared paths.
	Sandbox bool     `json:"sandbox,omitempty"`
	Scope   []string `json:"scope,omitempty"`
	// StrictScope: Scope is default-deny (sandbox.Scope.Strict; the
	// worker sets it for every rule), ScopeNote why it is empty
	// (sandbox.Scope.Note).
	StrictScope bool   `json:"strict_scope,omitempty"`
	ScopeNote   string `json:"scope_note,omitempty"`
	// Units, Sysctl and Keys are what the rule's check reads besides files
	// (sandbox.Scope).
	Units  []string `json:"units,omitempty"`
	Sysctl []string `json:"sysctl,omitempty"`
	Keys   []string `json:"keys,omitempty"`
}

// sandboxProbeResult says whether the recording sandbox can run on a host:
// Missing names what is missing, "" when it can.
type sandboxProbeResult struct {
	Missing string `json:"missing,omitempty"`
}

// commandResult is what a remediation command did. Err is set when the
// transport failed while it ran: its outcome is unknown.
type commandResult struct {
	Exec nightshift.Exec `json:"exec"`
	Err  string          `json:"err,omitempty"`
}

// Activities are everything a night does to the world: host commands over
// the Connector and model calls to Model. They run on the workers of a
// zone (host activities) or of the model queue (model calls). Safe for
// concurrent use if the Connector and Model are.
type Activities struct {
	// Connector reaches the zone's hosts (required for host activities).
	Connector nightshift.Connector
	// Model is the model server client (required for model calls).
	Model worker.ChatModel
	// HeartbeatEvery is how often long activities heartbeat (the SDK
	// throttles them to the heartbeat timeout); zero means 1s.
	HeartbeatEvery time.Duration

	// MaxIdleConns caps the host connections kept open between
	// activities (a host's rules run one after another, so a kept
	// connection saves a handshake per command; any process of the zone
	// may run a host's next activity, so each can end up reaching every
	// host); beyond it the least recently used idle ones are closed.
	// Connections in use are never closed. Zero keeps none open between
	// activities, as `worker fleet serve --host-conns 0` does (the CLI
	// passes its flag here unchanged); DefaultMaxIdleConns (128) is the
	// CLI's default. Negative is treated as zero.
	MaxIdleConns int
	// IdleConnTimeout closes a kept connection no activity has used for
	// this long (the host's night has most likely ended). Zero means 30s.
	IdleConnTimeout time.Duration

	pool connPool
}

// Close closes the connections kept to hosts.
func (a *Activities) Close() error { return a.pool.close() }

// heartbeat records heartbeats until the returned stop is called, so that
// the server learns within the heartbeat timeout that a worker died.
func (a *Activities) heartbeat(ctx context.Context) (stop func()) {
	every := a.HeartbeatEvery
	if every <= 0 {
		every = time.Second
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

// target returns the kept connection to h and its release (see connPool).
func (a *Activities) target(ctx context.Context, h inventory.Host) (nightshift.Target, func(broken bool), error) {
	if a.Connector == nil {
		return nil, nil, errors.New("fleet: this worker has no connector to hosts")
	}
	a.pool.configure(a.MaxIdleConns, a.IdleConnTimeout)
	return a.pool.acquire(ctx, a.Connector, h)
}

func (a *Activities) run(ctx context.Context, h inventory.Host, command string) (nightshift.Exec, error) {
	return a.runWith(ctx, h, func(t nightshift.Runner) (nightshift.Exec, error) { return t.Run(ctx, command) })
}

// runWith calls f with the kept connection to h.
func (a *Activities) runWith(ctx context.Context, h inventory.Host, f func(nightshift.Runner) (nightshift.Exec, error)) (nightshift.Exec, error) {
	t, release, err := a.target(ctx, h)
	if err != nil {
		return nightshift.Exec{ExitCode: -1}, err
	}
	ex, err := f(t)
	release(err != nil && ctx.Err() == nil) // a transport error: the connection is not kept
	return ex, err
}

// guard is the lockout net for the worker's login on h: its canary makes
// fresh logins through the connector's SSH configuration when the
// connector is a orchestrate.SSHConnector (else it runs the latent check only).
func (a *Activities) guard(h inventory.Host) (*lockout.Guard, error) {
	// sshd's own view of the connection (its port behind a forwarder or
	// NAT) is read on the host from SSH_CONNECTION.
	cfg := lockout.Config{User: h.User}
	if c, ok := a.Connector.(orchestrate.SSHConnector); ok {
		sc := c.Config(h)
		cfg.FreshLogin, cfg.User = lockout.SSHLogin(sc), sc.User
	}
	if cfg.User == "" {
		cfg.User = "root"
	}
	return lockout.New(cfg)
}

// hostPolicy is the effect judge's view of the worker's login on h over
// t: the login and port the connector uses for h, and what t's SSH
// connection knows of the login (the host key known_hosts accepted, the
// worker's key, the address dialled) when t is an SSH client.
func (a *Activities) hostPolicy(ctx context.Context, h inventory.Host, t nightshift.Runner) (safety.EffectsPolicy, error) {
	pol := safety.EffectsPolicy{Login: h.User, SSHPort: h.Port}
	if c, ok := a.Connector.(orchestrate.SSHConnector); ok {
		sc := c.Config(h)
		pol.Login, pol.SSHPort = sc.User, sc.Port
	}
	if f, ok := t.(sshFacter); ok {
		facts, err := f.SSHFacts(ctx)
		if err != nil {
			return pol, fmt.Errorf("the SSH connection's facts: %w", err)
		}
		pol = pol.WithSSH(facts)
	}
	return pol, nil
}

// sshFacter is a connection that tells what it knows of the worker's SSH
// login (sshexec's *Client).
type sshFacter interface {
	SSHFacts(ctx context.Context) (nightshift.SSHFacts, error)
}

// SandboxProbe says whether the recording sandbox can run on the host. A
// transport error fails the activity (retried by its policy).
func (a *Activities) sandboxProbe(ctx context.Context, in probeInput) (sandboxProbeResult, error) {
	defer a.heartbeat(ctx)()
	var res sandboxProbeResult
	_, err := a.runWith(ctx, in.Host, func(t nightshift.Runner) (nightshift.Exec, error) {
		perr := sandbox.New(t, sandbox.Config{}).Probe(ctx)
		var ue *sandbox.UnavailableError
		if errors.As(perr, &ue) {
			res.Missing = strings.Join(ue.Missing, "; ")
			return nightshift.Exec{}, nil
		}
		return nightshift.Exec{}, perr
	})
	return res, err
}

// Probe runs one read-only probe command. A transport error fails the
// activity (retried by its policy).
func (a *Activities) probe(ctx context.Context, in probeInput) (nightshift.Exec, error) {
	defer a.heartbeat(ctx)()
	return a.run(ctx, in.Host, in.Command)
}

// Check evaluates a rule's shell or oscap check. A transport error fails
// the activity (retried by its policy); a banned check command is not
// retried.
func (a *Activities) check(ctx context.Context, in checkInput) (rules.CheckResult, error) {
	defer a.heartbeat(ctx)()
	var check rules.Check = rules.ShellCheck{Command: in.Command}
	if o := in.Oscap; o != nil {
		check = scap.Check{Datastream: o.Datastream, Profile: o.Profile, Rule: o.Rule, Oscap: o.Oscap}
	}
	res, err := check.Evaluate(ctx, hostRunner{a, in.Host})
	res.Output, res.Detail = nightshift.RedactText(res.Output), nightshift.RedactText(res.Detail)
	if errors.Is(err, safety.ErrBanned) {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), errTypeBanned, err)
	}
	return res, err
}

// hostRunner runs commands on one host through the activities' connector.
type hostRunner struct {
	a    *Activities
	host inventory.Host
}

func (r hostRunner) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	return r.a.run(ctx, r.host, command)
}

// Command runs one remediation command. It is scheduled with a single
// attempt: a transport error is a result (outcome unknown), never a retry.
func (a *Activities) command(ctx context.Context, in commandInput) (commandResult, error) {
	defer a.heartbeat(ctx)()
	var ex nightshift.Exec
	var err error
	if in.Sandbox {
		ex, err = a.runWith(ctx, in.Host, func(t nightshift.Runner) (nightshift.Exec, error) {
			rcfg := sandbox.RunnerConfig{}
			if g, err := a.guard(in.Host); err == nil {
				rcfg.Guard = g
			} else {
				return nightshift.Exec{ExitCode: -1}, err
			}
			pol, err := a.hostPolicy(ctx, in.Host, t)
			if err != nil {
				return nightshift.Exec{ExitCode: -1}, err
			}
			return sandbox.NewRunner(sandbox.New(t, sandbox.Config{}), pol, rcfg).Run(sandbox.WithRuleScope(ctx, sandbox.Scope{Paths: in.Scope, Strict: in.StrictScope, Units: in.Units, Sysctl: in.Sysctl, Keys: in.Keys, Rule: in.Rule, Note: in.ScopeNote}), in.Command)
		})
	} else {
		ex, err = a.run(ctx, in.Host, in.Command)
	}
	// The result is kept in the workflow's history and its report: its
	// output masked (the command's text, the activity's input, is not).
	res := commandResult{Exec: ex.Redacted()}
	if err != nil {
		res.Err = nightshift.RedactText(err.Error())
	}
	return res, nil
}

// modelRequest is the model-call activity's input: the worker's request,
// whose JSON is openai.ChatCompletionRequest's. Decoding keeps each tool's
// parameters schema as the JSON text it was sent as: decoded into the
// request's `any` it would become a map and go out again with its keys
// sorted, a different prompt from the one the worker counted (and from the
// one `worker run` sends, so vLLM's prefix cache would not match either).
type modelRequest struct {
	openai.ChatCompletionRequest
}

// UnmarshalJSON decodes the request, tools' parameters as json.RawMessage.
func (r *modelRequest) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &r.ChatCompletionRequest); err != nil {
		return err
	}
	var raw struct {
		Tools []struct {
			Function *struct {
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for i, t := range raw.Tools {
		if i < len(r.Tools) && r.Tools[i].Function != nil && t.Function != nil && len(t.Function.Parameters) > 0 {
			r.Tools[i].Function.Parameters = t.Function.Parameters
		}
	}
	return nil
}

// ModelCall makes one model call. Errors the worker's policy retries (5xx,
// 429, dropped connections, timeouts) fail the attempt, and Temporal retries
// it with the policy's backoff; any other answer (context-length rejections
// included) fails it for good with the server's message.
func (a *Activities) modelCall(ctx context.Context, in modelRequest) (openai.ChatCompletionResponse, error) {
	req := in.ChatCompletionRequest
	if a.Model == nil {
		return openai.ChatCompletionResponse{}, temporal.NewNonRetryableApplicationError("fleet: this worker serves no model calls", errTypeNoModel, nil)
	}
	defer a.heartbeat(ctx)()
	resp, err := a.Model.CreateChatCompletion(ctx, req)
	if err == nil {
		// An answer without choices is a server fault, retried: a
		// workflow must never see it (the worker would retry it itself).
		err = worker.CheckReply(resp)
	}
	if err == nil {
		return resp, nil
	}
	if worker.Retryable(err) {
		return resp, fmt.Errorf("model call: %w", err)
	}
	if se, ok := served.ServerError(err); ok {
		// The server's answer travels typed, for the worker to classify.
		return resp, temporal.NewNonRetryableApplicationError(se.Message, errTypeModelRejected, nil,
			modelRejection{Server: true, Status: se.HTTPStatusCode, StatusText: se.HTTPStatus, Type: se.Type, Param: se.Param})
	}
	return resp, temporal.NewNonRetryableApplicationError(served.ServerMessage(err), errTypeModelRejected, nil, modelRejection{})
}

// modelRejection is what a model-call failure carries of the server's typed
// error answer besides its message (the failure's details).
type modelRejection struct {
	Server     bool    `json:"server"` // the answer was the server's JSON error (served.ServerError)
	Status     int     `json:"status"`
	StatusText string  `json:"status_text,omitempty"`
	Type       string  `json:"type,omitempty"`
	Param      *string `json:"param,omitempty"`
}

// rejection rebuilds the server's typed error answer from a model-call
// failure, for the worker to classify (it reads only typed errors); an
// answer that was not the server's JSON stays a plain error. A failure
// without details, recorded in a history before they were kept, was the
// server's message: it is typed with an unknown status (0).
func rejection(ae *temporal.ApplicationError) error {
	var d modelRejection
	if !ae.HasDetails() || ae.Details(&d) != nil {
		return &openai.APIError{Message: ae.Message()}
	}
	if !d.Server {
		return errors.New(ae.Message())
	}
	return &openai.APIError{Message: ae.Message(), HTTPStatusCode: d.Status, HTTPStatus: d.StatusText, Type: d.Type, Param: d.Param}
}
