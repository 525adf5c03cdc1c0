// Package metrics exposes Nightshift's Prometheus metrics, with the official
// client library (github.com/prometheus/client_golang), for the CLI's
// --metrics-addr.
//
// New returns a Metrics with a registry of its own: nothing is registered in
// the library's global registry and the package has no state, so several
// Metrics can live in one process (tests, runs). Metrics is a nightshift.Observer
// (give it to every host's worker, through a fan-out with the other
// observers); Model and Target wrap a worker's model client and host target
// to time their calls. Handler serves the registry; Serve runs an HTTP
// server for it until its context ends.
//
// The metrics (namespace "nightshift" unless Config.Namespace says
// otherwise; Config.ConstLabels are added to all):
//
//	attempts_total{result}                 attempts ended: pass, fail, error, give_up, none (no command ran)
//	fixes_total                            rules fixed (re-check passed after an attempt)
//	rules_total{status}                    rules ended, by nightshift.RuleStatus
//	rules_in_progress                      rules started and not yet ended
//	context_rejections_total               prompts the server rejected for their length
//	model_retries_total                    model calls retried after a failure
//	commands_total{action}                 tool calls by action (ran, blocked, refused, malformed, ...)
//	prompt_tokens                          histogram of each model call's prompt tokens
//	usage_prompt_tokens_total              prompt tokens of the calls answered (the server's usage)
//	usage_cached_prompt_tokens_total       of those, tokens the server's prefix cache served; the
//	                                       cache share is the ratio of the two
//	model_call_duration_seconds{result}    histogram of model server calls (each try), ok or error
//	host_command_duration_seconds{result}  histogram of commands run on hosts — remediations, checks
//	                                       and probes — ok, or error when the outcome is unknown
//	distill_fallbacks_total{reason}        lines the model distiller left to the deterministic one:
//	                                       request, empty, oversize, claim (distill.FallbackReason)
//
// plus, unless Config.NoRuntime, the Go runtime and process collectors.
// Event and rule labels are never per rule or per host: 200 rules × 50 hosts
// would make 10,000 series.
//
// Concurrency: every method is safe for concurrent use; Observe and the
// wrappers only update in-memory metrics and never block on I/O.
package metrics
