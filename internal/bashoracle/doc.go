// Package bashoracle runs a shell command under real bash, inside a
// disposable bubblewrap sandbox, and reports what bash actually did: the
// argv of every program executed, every path opened for writing, and every
// signal sent. It is the oracle the safety package's ban check is tested
// against ("the checker must block every command for which bash executed a
// banned argv or wrote a protected path"), so it never interprets shell
// syntax itself: all shell work (quoting, expansion, globbing, brace
// expansion, here-documents, functions, loops, nested `bash -c`) is done by
// /bin/bash, and the oracle only reads system calls recorded by strace.
// It also records the directory each program started in (for relative
// operands) and counts forks, including those refused by the process limit
// (a fork bomb shows as Trace.ForkLimited > 0).
//
// # What runs, and where
//
// [Oracle.Run] starts
//
//	bwrap … -- strace -f … -- prlimit --nproc=N -- setpriv --reuid=UID … -- bash -c COMMAND
//
// with, inside the sandbox:
//
//   - the host's root file system bound read-only, a private tmpfs on /tmp,
//     /var/tmp and /run, a minimal tmpfs /dev (null, zero, random, tty, …;
//     no disks, so `> /dev/sda` creates a harmless file on a tmpfs or fails)
//     and a new /proc in a new PID namespace, whose /proc/sys and
//     /proc/sysrq-trigger bubblewrap binds read-only;
//   - new network, IPC, UTS and cgroup namespaces (no network at all);
//   - every program directory (/usr/bin, /usr/sbin, /usr/local/bin,
//     /usr/local/sbin, and /bin and /sbin where they are directories)
//     replaced by a directory of stubs: one no-op program (coreutils' true)
//     linked under every name found in the host's program directories plus
//     [StubNames] and Config.Programs. A stub does nothing and exits 0; the
//     trace records that it was executed and with which argv. sh, bash,
//     dash and rbash are real bash, so nested shells really run. A command
//     name that is none of these is run as a stub too (bash's
//     command_not_found_handle, set through BASH_ENV);
//   - the command runs as an unprivileged user (Config.UID, by default a random id above 1,000,000)
//     with one capability, CAP_DAC_READ_SEARCH, so it can read and list
//     everything root can (globs under /root expand as they would for root,
//     `cd /root` works) but can write nothing outside the private tmpfs
//     mounts. Every attempt is recorded whether or not it succeeded: the
//     oracle reports what bash tried to do;
//   - the number of processes is capped (Config.MaxProcs, RLIMIT_NPROC,
//     which is enforced because the user is not root), the run is killed
//     after Config.Timeout, and the trace and output are capped, so fork
//     bombs and endless commands end cleanly and are marked in the Trace;
//   - bash starts in Config.Dir (default /root, where a root SSH session
//     starts) with HOME=/root, PATH the Debian root default, LANG=C;
//   - bubblewrap's --die-with-parent: nothing outlives the run.
//
// Known differences from a real root shell, all on the side of running
// less: $EUID and `id -u` are Config.UID; a stub's output is empty and its
// exit status 0, so `$(cmd)` substitutions expand to nothing and `||`
// branches after a program are not taken; wrappers (sudo, env, timeout,
// xargs, …) are stubs too, so the program they would run is visible only in
// their argv. Judging those argv is the caller's job.
//
// # Requirements
//
// Root (to create the namespaces and switch user), bwrap (Debian package
// bubblewrap), strace (strace), prlimit and setpriv (util-linux). [New]
// returns an error wrapping [ErrUnavailable] when one is missing.
//
// # Concurrency
//
// An Oracle is safe for concurrent use: each Run has its own sandbox and
// trace file. Close removes the stub directory; Run after Close fails.
package bashoracle
