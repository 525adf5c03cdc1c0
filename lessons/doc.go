// Package lessons carries what attempts at a rule learned on one host to the
// same rule on other hosts and in later runs.
//
// When a rule ends on a host, a Recorder — a nightshift.Observer, one per host's
// worker — turns the attempts it observed into lessons: the passing attempt
// as what worked ("fixed in attempt 3: ran `aideinit -y -f` — exit 0;
// re-check passed"), the other attempts as what failed and why ("ran
// `apt-get install -y aide` — exit 100: dpkg lock held; re-check
// failed"), and a give-up's reason. Lines are package distill's turn lines
// without their turn number, with the error classes the worker found in the
// commands' output; malformed and refused calls teach nothing about the host
// and are left out. Flush writes them to a Store.
//
// A Store keeps lessons: MemoryStore in memory, SQLite in a SQLite file (its own
// tables, lessons and lessons_schema). In a journal's file the store is made
// with NewSQLite on the open journal and writes through the journal's single
// writer connection (no SQLITE_BUSY between the two); OpenSQLite opens a
// file of its own.
// Store.Lessons ranks a rule's lessons for a host: same OS and package
// manager first, then same OS, then same package manager; within each, what
// worked before what failed, newest first; identical texts once, with the
// number of copies. The order is deterministic, and both stores rank with
// the same code (SQLite reads the rule's rows, the ranking is done in Go).
//
// A Source gives a store's lessons to the worker (worker.Config.Lessons),
// which adds as many whole lessons, most relevant first, as fit in the
// instruction's share of the prompt, counted with the model's tokenizer.
//
// Errors: ErrInvalid for a lesson without rule or text or with an unknown
// kind (the whole batch is refused); ErrSchema for a file with a newer
// lessons schema; store errors are wrapped with the operation that failed.
// Nothing panics on bad input.
//
// Concurrency: MemoryStore, SQLite, Source and Recorder are safe for concurrent
// use; SQLite files may be shared by several processes. Recorder.Observe does
// no I/O; lessons are stored only by Flush, which keeps them pending when the
// store fails.
package lessons
