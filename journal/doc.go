// Package journal is Nightshift's durable record of overnight runs: an
// embedded SQLite database (modernc.org/sqlite, pure Go, no cgo) in WAL mode
// with foreign keys on and a versioned schema migrated on Open.
//
// # What is recorded
//
// A run (its configuration, start and end) holds tasks, one per rule × host.
// A task holds steps, each its own row in the steps table plus a detail row:
// model calls with their budget breakdown, commands (the command, its
// nightshift.Action, and the runner's nightshift.Exec: capped stdout and
// stderr with what the cap cut from each, exit code, signal, timeout,
// cancellation, duration), check results (a nightshift.CheckStatus),
// attempt ends, distillations (the distilled lines and, as the audit record,
// the exact messages they replaced) and free-form events.
//
// A run's status is a nightshift.RunStatus and a finished task's a
// nightshift.RuleStatus, stored as their text ("running", "done"; "fixed",
// "not_fixed"…; an unfinished task's column reads "running"). Read back, a
// status the program does not know is an error wrapping
// nightshift.ErrUnknownValue, never a default.
//
// Actions and check statuses are stored as their text ("ran", "timed_out",
// "fail"…; an attempt in which the model gave up as "give_up"). The journal
// refuses to store a value that does not fit the step, and a stored text it
// does not know is an error wrapping nightshift.ErrUnknownValue when read
// back, never a default.
//
// # Durability
//
// Every Record/Begin/Finish/End method is synchronous: it returns only after
// its transaction has committed (synchronous=FULL by default, so a commit
// survives power loss, not only kill -9). A caller that records a step before
// starting the next therefore never loses a finished step. A record is one
// transaction, so a crash leaves it whole or absent, never torn.
//
// # Secrets
//
// The journal stores no password hash and no private key: every text it
// records (commands, their output and error, check output, notes, reasons,
// distilled lines, and every string inside a JSON payload: the model's
// replies, the messages a distillation replaced, outcomes) goes through
// nightshift.RedactText first, and evidence through Evidence.Redacted. A
// command is therefore recorded as its masked text, and a resumed task's
// replayed replies carry the masked text too (the worker refuses to run a
// command that holds a mask; the replay goes on live from there).
//
// # Resume
//
// Commands are recorded in two phases: BeginCommand commits the command as
// started and returns a PendingCommand handle, FinishCommand records the
// result through that handle. A task has at most one started command (a
// unique index enforces it). After a crash, PendingCommands and ResumeRun
// report the commands that started without a result: their outcome is
// unknown, and the journal refuses BeginCommand and FinishTask for their task
// (ErrCommandPending) until the caller has decided what happened and called
// MarkUnknown. A command can thus never be re-run silently. ResumeRun also
// lists finished tasks (never to be redone: FinishTask succeeds once per task,
// StartTask on a finished task returns ErrTaskFinished) and reconstructs each
// task in progress (its attempts, its ledger of commands with outcomes, its
// checks and distilled lines) via TaskState.
//
// # Queries
//
// Runs, Tasks and Steps serve `worker history`. For people the schema has
// plain-SQL views, stable across schema versions:
//
//	run_summary      one row per run: status, tasks, finished, fixed
//	task_summary     one row per rule × host: status, attempts, model calls,
//	                 commands, largest prompt, prompt tokens and cached
//	                 prompt tokens (the server's usage), duration
//	command_log      every command with its state and result
//	pending_commands commands started without a result (outcome unknown)
//
// for example `sqlite3 journal.db 'select * from task_summary'`. Prune deletes
// ended runs older than a cutoff with everything they hold.
//
// # Concurrency
//
// A Journal is safe for concurrent use by many goroutines (one per host).
// All writes go through a single writer connection (database/sql pool of
// size one), so they are serialized in process without SQLITE_BUSY; reads
// use a separate pool and see the last committed state. Another package
// that keeps tables in the journal's file (packages lessons and recipes)
// creates them and checks their version with InitTables, writes them with
// WriteTx, on the same writer connection, and reads them with
// QueryContext: in process there is still one writer. Other processes
// (`worker history`, sqlite3) may read the file at any time. A writing Open
// takes an exclusive flock on the journal file itself (its device and inode,
// not the path as typed), held until Close and dropped by the kernel if the
// process dies: a second writing Open — in this process or another, through
// the same path, a symlink, a hard link or any other spelling — fails at once
// with ErrBusy, before it reads or writes anything. Another program writing
// the file with SQLite directly (sqlite3) is not stopped by the flock; its
// writes wait up to Config.BusyTimeout for SQLite's write lock and then fail
// with SQLITE_BUSY. (SQLite's EXCLUSIVE locking mode would stop it too, but
// would also stop `worker history` from reading a night in progress.)
//
// # Bad input
//
// Open returns ErrNotJournal for a file that is not SQLite or is an SQLite
// database of another application (the file is left untouched), a
// *SchemaError matching ErrNewerSchema for a journal written by a newer
// Nightshift, and ErrReadOnly for a file that cannot be written (open it
// with Config.ReadOnly to query it). A WAL-mode file that looks empty and has
// no -wal file next to it is a copy that lost its records (they were all in
// the -wal file of a journal in use): ErrWALMissing, naming the file. A
// zero-byte file is a new journal for a writer (callers that expect
// records, such as `worker resume`, refuse it first) and a *SchemaError for
// a reader.
package journal
