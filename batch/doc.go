// Package batch runs many rules on many hosts — an overnight pipeline — with
// every step committed to a journal (package journal) before the next starts,
// so that a run killed at any point resumes without redoing finished work
// and without running any recorded command twice.
//
// # Scheduling
//
// Runner.Run works on each host's rules one at a time, in the order given
// (rules on one host interfere), and on Config.ParallelHosts hosts at once.
// Each host's rules go through orchestrate.Work, the rule loop package fleet
// runs too: package batch is its journal engine.
// All hosts share one model: at most Config.ModelConcurrency model calls are
// in flight across the run. Each host gets its own worker.Worker (one probe
// per host) built from Config.Worker.
//
// A host that stops answering — its connection fails or a check cannot run
// because of a transport error — is marked: its current rule and every rule
// it has left are finished as "unreachable" with the reason, a
// host_unreachable event is recorded, and the other hosts go on. A model
// server that stays unreachable past the worker's retry deadline stops the
// run with nightshift.ErrModelUnreachable; the tasks in progress stay unfinished for a
// resume.
//
// # What is recorded, and when
//
// Before the worker goes on from a step, the step is committed:
//
//   - each model call with its budget assessment (from the worker's
//     model_call event), its duration and error, then the model's reply as a
//     model_reply event;
//   - each remediation command in two phases: BeginCommand before it runs,
//     FinishCommand with its capped output (and what the cap cut from each
//     stream), exit code, signal, timeout, cancellation and duration after
//     (the host probe runs through worker.Config.Probe on the host itself:
//     read-only and not a step; a transport error of it, reported by the
//     worker's probe event, marks the host unreachable);
//   - commands that were not run (blocked, refused, malformed, give_up);
//   - every check result (attempt 0 before the first attempt);
//   - each attempt's end with its prompt tokens and limit;
//   - each distillation with its lines and the exact messages before it
//     (worker.Config.MemoryObserver);
//   - context-length rejections as context_rejected events;
//   - the task's outcome (the worker's Outcome as JSON).
//
// If a journal write fails, nothing more runs on that host: the next model
// call, command or check returns the error and the run fails with it.
//
// # Resume
//
// Runner.Resume continues a run after a crash, a kill -9 or a stop:
//
//   - finished rule × host tasks are never redone;
//   - a command that started without a recorded result is marked unknown in
//     the journal and is never run again: when the resumed task reaches it,
//     the worker is told its outcome is unknown (nightshift.ErrOutcomeUnknown), exactly
//     as for a connection lost mid-command;
//   - a task in progress continues from its recorded state. It is worked on
//     by a fresh worker whose model replies, command results and check
//     results come from the journal, in order, without calling the model or
//     touching the host; the worker being deterministic given those, it
//     rebuilds the same memory and takes the same steps, which are not
//     recorded again. Once the recorded steps are used up the task goes on
//     live. A command recorded as run that the model proposes again before
//     the replay is over is refused (ErrAlreadyRan), never re-run.
//
// A task whose replay reaches a command of unknown outcome therefore goes on
// differently from an uninterrupted run (the worker was told the outcome is
// unknown, not the result it would have had). Every other task ends exactly
// as if the run had never been interrupted, apart from durations. Model
// calls that failed (retries, context-length rejections) are recorded but not
// replayed; a task that had them may re-distil differently.
//
// # Reports
//
// Report builds a report.Run from the journal alone (orchestrate.Report, the
// tasks rebuilt from their steps), in the recorded order of rules and hosts,
// so the reports
// of a run resumed any number of times match those of a run never
// interrupted.
//
// # Signals
//
// Closing Config.Stop ends the run gracefully: each host finishes its
// current step (a command or a check in flight), records it and starts
// nothing new; its task stays unfinished and resumes later. Every wait ends
// at once: the worker runs under a context the stop cancels — a model call
// in flight, its retry backoff, the wait for the model-call limiter and the
// redial of a host whose connection broke (done before a command is begun,
// so a command whose connection a stop cut short is not recorded and runs
// on resume) — while commands and checks run under the run's context. Cancelling the context stops at once: a
// command in flight is cancelled (its result, if any, still recorded), and
// whatever was committed is consistent — a command begun without a result is
// resolved as unknown by the next resume.
//
// # Observing a run
//
// Config.HostObserver gives each host's worker an observer of its own (for
// lessons, progress or metrics per host); Config.Progress, a small
// interface that package progress satisfies, is told each host's plan,
// each task's start and end, and hosts that stop answering.
//
// # Concurrency
//
// A Runner may be used by several goroutines. Within a run each host is
// worked on by one goroutine, which also runs the host's worker callbacks;
// the journal serializes writes.
package batch
