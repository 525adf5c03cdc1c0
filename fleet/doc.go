// Package fleet runs Nightshift's nights on Temporal (go.temporal.io/sdk)
// instead of one `worker run` process: the same rules, inventories, attempt
// loop, memory, lessons and reports, with zones, fail-over between worker
// machines, schedules, one view of what runs and one cap on model calls
// across machines. The SQLite journal (packages batch and journal) stays the
// embedded default for one machine.
//
// # Workflows
//
// The night workflow (NightWorkflowName, on NightQueue) takes a Night — the
// rules files' text, the hosts, the model and the limits — and starts one
// host workflow (HostWorkflowName) per host, ParallelHosts at a time in
// inventory order, on the task queue of the host's zone, ZoneQueue(ZoneOf(h)):
// the inventory variable nightshift_zone, DefaultZone when unset. Its
// result, NightResult, holds every host's tasks; StatusQuery and ResultQuery
// answer while it runs. Lessons taught by hosts that finished reach the host
// workflows started after (the newest 24 per rule).
//
// The host workflow works on the host's rules one at a time with the
// unchanged attempt loop (package worker) running inside the workflow: the
// memory, the distiller, the budget and the lessons are deterministic and are
// workflow code; everything that touches the world is an activity:
//
//   - Probe: the read-only host probe; retried (3 tries).
//   - Check: a rule's shell check; retried (3 tries), except a banned check.
//   - Command: a remediation command; one try, never retried. When its
//     worker dies (the heartbeat times out) its outcome is unknown: the
//     worker is told so (batch.ErrOutcomeUnknown, as the journal does on
//     resume), the check runs again and tells whether it took effect, and
//     the report shows the command as "unknown". A transport error while it
//     ran is recorded the same way and marks the host.
//   - ModelCall: on ModelQueue, with the worker's retry policy (backoff from
//     500ms doubling to 30s, as many tries as fit in the retry deadline; time
//     spent waiting for the fleet's cap does not count). A context-length
//     rejection goes back to the attempt loop, which distils harder as with
//     `worker run`; a server down past the deadline stops the host, its
//     unfinished tasks reported interrupted.
//
// A host whose probe or check fails after its retries is unreachable: its
// remaining rules end as "unreachable" and the other hosts go on.
//
// # The cap on model calls
//
// Model calls run only on the workers of ModelQueue: each `worker fleet
// serve` with ModelSlots > 0 makes at most that many at once, so the
// fleet-wide number in flight is at most the sum of the slots of the
// processes serving the queue (a dedicated pool of one or two processes next
// to the GPUs makes it a single number). ModelRate additionally caps the
// calls started per second across the fleet, enforced by the Temporal server
// (TaskQueueActivitiesPerSecond).
//
// # Determinism
//
// Workflow code must take the same steps when replayed. Tokenizers are
// loaded before a worker polls (ServeConfig.Tokenizers); the worker's own
// retries and request timeouts are disabled inside workflows (activities
// carry them); durations come from workflow.Now. The histories in
// testdata/replay, recorded from a real server, are replayed by the tests: a
// change that fails them needs workflow.GetVersion.
//
// # Limits
//
// SCAP datastream rules (`worker run --datastream`) are not supported yet.
// A night's history holds every host's result, so nights of thousands of
// hosts will need continue-as-new (not done). The model's name and window
// are fixed when the night starts.
//
// # Concurrency
//
// Workflows, Activities and the client helpers are safe for concurrent use;
// Temporal runs each workflow on one goroutine at a time.
package fleet
