// Package simhost is a simulated Linux host reachable over SSH, for tests and
// benchmarks of batch runs: an in-process golang.org/x/crypto/ssh server on
// 127.0.0.1 that executes nothing on this machine. Commands are interpreted
// by a tiny language against the host's own key/value state:
//
//	set KEY VALUE      state[KEY] = VALUE; prints "KEY=VALUE", exit 0
//	                   (a Config.Locked KEY: "read-only", exit 1)
//	set --force K V    the same, Locked or not
//	test KEY = VALUE   exit 0 when state[KEY] is VALUE, else exit 1
//	echo WORDS         prints WORDS
//	true / false       exit 0 / exit 1
//	kill …             exit 0 (sshexec's process-group kills)
//	the worker's probe prints os=, id=, version=, pkg= and init= lines
//
// anything else exits 127 ("not found"). sshexec's preamble announcing the
// process group is understood and answered with a fake group.
//
// # Custom execution
//
// Config.Exec replaces that language with the caller's own: worker demo
// uses it to run the few commands its scripted model can propose, and
// refuse every other, in a temporary directory. sshexec's kill of the
// fake process group then cancels the context of the commands running.
//
// # Durability
//
// With Config.Dir set, the state is kept in Dir/state.json (rewritten by
// rename after every change) and every command is appended to Dir/exec.log
// before it takes effect, so a test can count on the target side what ran,
// even across a kill -9 of the process serving the host: the page cache
// outlives the process. Without Dir both live in memory.
//
// # Concurrency
//
// A Host serves any number of connections and sessions concurrently; its
// state and log are guarded by one mutex, so commands take effect one at a
// time. Close is idempotent and makes the host stop answering (connections
// are cut), which is how tests simulate a host that goes down.
package simhost
