// Package fleet runs Nightshift's nights on Temporal (go.temporal.io/sdk)
// instead of one `worker run` process: the same rules, inventories, attempt
// loop, memory, lessons and reports, with zones, fail-over between worker
// machines, schedules, one view of what runs and one cap on model calls
// across machines. The SQLite journal (packages batch and journal) stays the
// embedded default for one machine. Reports are built by package
// orchestrate from the nights' results, as `worker run`'s are from the
// journal.
//
// # Workflows
//
// The night workflow ("nightshift.Night", on NightQueue) takes a Night — the
// rules files' text (or an SCAP datastream's path on the hosts and a
// profile), the hosts, the model and the limits — and starts one host
// workflow ("nightshift.Host", id NIGHT/HOST) per host, ParallelHosts at a
// time in inventory order, on the task queue of the host's zone,
// ZoneQueue(ZoneOf(h)): the inventory variable nightshift_zone, DefaultZone
// when unset. The "status" and "result" queries answer while it runs. Lessons
// taught by hosts that finished reach the host workflows started after (the
// newest 24 per rule).
//
// So do recipes (package recipes): the night keeps its recipes in a
// recipes.Memory on the workflow's clock, seeded from Night.Recipes (an
// earlier night's, e.g. a journal file's) and carried when it continues as
// new. Each host workflow gets the best replayable ones of each key proven
// before it started (hostInput.Recipes); its worker (worker.Recipes)
// replays the best of the host's key before asking the model and proves
// its own fixes; its HostResult returns its proofs and failed replays
// (RecipeChange), which the night merges in the order hosts end: a failed
// replay demotes the recipe for its key for the rest of the night.
// Night.NoRecipes turns replay off (fixes are still proved).
// NightResult.Recipes are the night's recipes, which `worker fleet export`
// writes with recipes.Export. Nights and hosts started before recipes
// (workflow versions "night-recipes", "host-recipes") replay without them.
//
// # The recipe book
//
// Recipes outlive a night in the fleet's recipe book: a long-lived entity
// workflow ("nightshift.RecipeBook", on NightQueue, id Night.Book or
// DefaultBook; one per fleet sharing a namespace) whose state is a
// recipes.Memory on its clock — the same proving, demoting, pinning and
// ranking as a journal's recipes. A night (workflow version "night-book")
// reads it when it starts, through the ReadRecipeBook activity on the night
// queue, which starts the book when no run of it is open (so the first
// night, a scheduled one included, creates it) and returns its recipes
// without their proofs. The book's recipes, demoted and retired ones
// included, are the night's; the recipes of Night.Recipes that the book
// lacks are added and published to it (BookChanges.Adopt): for a recipe
// both have, the book's state wins. As each host ends, the night signals
// its RecipeChanges to the book ("publish"; a signal from the workflow, so
// replay sends nothing twice), and before it ends or continues as new it
// waits until its signals are delivered (the server drops a signal whose
// sender has closed): a night that ended has its changes in the book.
// Recipes and SetRecipeState read and change the book (a query, and the
// "set-state" Update, whose validator refuses an unknown recipe or state
// before anything is recorded); nights started after a change replay
// accordingly, a running night keeps what it started with. The book
// continues as new after 500 changes, or sooner when the server suggests
// it, carrying its recipes within a bound (version "book-bound",
// bookbound.go): the book keeps proofs without their file changes (the
// night's results keep those), and when what it carries would exceed
// 1 MiB of JSON it keeps the first 3 proofs of each recipe, then drops
// active recipes, least recently proved or replayed first, logging each;
// it never drops pinned, retired or demoted ones. Its workers are those of
// the night queue: a
// book no worker serves does not answer. A night whose workers cannot reach
// the book (a worker without a client, e.g. in the SDK's test environment)
// logs it and keeps its recipes to itself, as nights did before the book;
// a book that was terminated is started again, empty, by the next night.
//
// Its history stays bounded however many hosts a night has: a run of the
// night workflow starts at most HostsPerRun host workflows (default 500, or
// fewer when the server suggests continue-as-new), waits for them, and
// continues as new with a Carry (where it stopped, its progress, its
// lessons). Its result, NightResult, leaves each host's tasks in that host's
// workflow (InChildren); Fetch reads them. Nights started before this
// (workflow version "night-waves") replay on the path they started on.
//
// Secrets: the command and check activities mask their results
// (nightshift.Exec.Redacted, nightshift.RedactText: password hashes and
// private keys in the output) before they enter the workflow's history, and
// the host's report and lessons get the worker's masked events. The
// history still holds a command's own text in the command activity's input
// (it is what runs) and the model's tool calls in the model-call
// activity's input (the model's own history, as package worker keeps it):
// a command written with a hash or a key in it is in the Temporal server's
// history as written; the reports and the results are masked.
//
// With a Datastream the night first reads the datastream on the first host
// of the first host's zone that answers (the Datastream activity on that
// zone's queue: the zone's workers hold the SSH keys), as `worker run
// --datastream` does, and carries the profile's rules (SCAPRules) to its
// host workflows and later runs; each rule is checked with oscap on the host.
//
// The host workflow works on the host's rules one at a time through the
// rule loop of package orchestrate, which `worker run` runs too (the host
// workflow is its Temporal engine), with the unchanged attempt loop
// (package worker) running inside the workflow: the
// memory, the distiller, the budget and the lessons are deterministic and are
// workflow code; everything that touches the world is an activity:
//
//   - Probe: the read-only host probe; retried (3 tries).
//   - Check: a rule's shell or oscap check; retried (3 tries), except a
//     banned check.
//   - Command: a remediation command; one try, never retried. When its
//     worker dies (the heartbeat times out) its outcome is unknown: the
//     worker is told so (nightshift.ErrOutcomeUnknown, as the journal does on
//     resume), the check runs again and tells whether it took effect, and
//     the report shows the command as "unknown". A transport error while it
//     ran is recorded the same way and marks the host.
//   - ModelCall: on the model queue (nightshift-model), with the worker's retry policy (backoff from
//     500ms doubling to 30s, as many tries as fit in the retry deadline; time
//     spent waiting for the fleet's cap does not count). A context-length
//     rejection goes back to the attempt loop, which distils harder as with
//     `worker run`; a server down past the deadline stops the host, its
//     unfinished tasks reported interrupted. The server's usage (prompt
//     tokens, usage.prompt_tokens_details.cached_tokens) is summed per task
//     and reaches the reports, as with `worker run`.
//
// A host whose probe or check fails after its retries is unreachable: its
// remaining rules end as "unreachable" and the other hosts go on.
//
// Any worker of a zone may run a host's next activity, so Activities keep a
// host's SSH connection between its activities only while it is likely to be
// needed again: at most MaxIdleConns idle ones (the least recently used are
// closed first), each closed after IdleConnTimeout unused; a connection in
// use is never closed. (Keeping one per host until the process stopped made
// a serve process's memory grow with the hosts of a night; the measurements
// are in docs/benchmarks.md.)
//
// # The cap on model calls
//
// Model calls run only on the workers of the model queue: each `worker fleet
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
// carry them: the model-call activity fails an answer the worker cannot use,
// a worker.ReplyError or one without choices, as retryable, and is bounded
// by min(Night.RequestTimeout, Night.RetryDeadline)); durations come from
// workflow.Now. The histories in
// testdata/replay, recorded from a real server, are replayed by the tests: a
// change that fails them needs workflow.GetVersion.
//
// # Connecting
//
// TLS names the files of a mutual-TLS connection to the Temporal frontend
// (client certificate and key, CA bundle, server name); TLS.Config checks
// them before anything is dialled.
//
// # Limits
//
// A night's input from the book, its Carry and its NightResult.Recipes
// hold every recipe of the book (without the book's proofs), so they stay
// within the book's bound (1 MiB); pinned, retired and demoted recipes
// alone over it are carried anyway, with an error in the book's log, and
// the server then refuses the payload (2 MiB by default).
// The model's name and window are fixed when the night starts. Each host
// workflow's input carries the night's rules, so a profile of hundreds of
// SCAP rules makes large child inputs: the server's continue-as-new
// suggestion then ends runs after fewer hosts. A run drains its hosts before
// continuing as new, so parallelism dips at each run's end.
//
// # Concurrency
//
// Workflows, Activities and the client helpers are safe for concurrent use;
// Temporal runs each workflow on one goroutine at a time.
package fleet
