// Package sandbox runs a model's command first in a throwaway recording
// sandbox on the host, so that it is judged by what it did, not by how it
// was written, and applies only the effects a judge allows.
//
// # What runs on the host
//
// A small bash helper (helper.sh, embedded, installed content-addressed
// under /var/lib/nightshift) does the host's part with util-linux and
// coreutils only. [Sandbox.Try] runs the command once, as root, with:
//
//   - file systems: a new mount namespace whose root is an overlay of the
//     host's root file system, and an overlay over every other writable
//     mount (read-only mounts and pseudo file systems bound read-only),
//     reached through pivot_root with the old root detached; the upper
//     layers live in a tmpfs under /run/nightshift/sandbox/ID on the host,
//     outside every overlaid file system;
//   - processes: a new PID namespace with a fresh /proc (/proc/sys and
//     /proc/sysrq-trigger read-only): kill, pkill and kill -1 reach only the
//     command's own processes, and everything it started ends with it;
//   - capabilities: a bounding set without SYS_ADMIN, SYS_BOOT, SYS_MODULE,
//     MKNOD, SYS_PTRACE, NET_ADMIN, SYS_RAWIO, SYS_TIME, SYS_CHROOT,
//     DAC_READ_SEARCH (open_by_handle_at) and the other kernel-wide ones; a
//     minimal /dev (null, zero, full, random, urandom, tty, its own pts and
//     shm), a read-only /sys, and a /run that is an overlay over a copy of
//     the host's /run taken at the start, without sockets or FIFOs
//     (systemd, D-Bus and init are not reachable), and without
//     /run/nightshift (the trials' layers), /run/user (the logins' runtime
//     directories) and the helper's own /run/nightshift-* (the recorder,
//     its log): those are neither seen nor recorded;
//   - on a host that is itself in a user namespace (a container, or
//     internal/debtarget's Debian target), where mknod is refused and the
//     kernel refuses a fresh proc under locked read-only parts: the
//     overlays keep their marks in user.* xattrs (userxattr), the device
//     nodes are the host's bound read-only (usable; a chmod or chown of
//     them fails instead of changing a copy), and /proc is the host's
//     bound (its read-only parts stay read-only; the command's PID
//     namespace is still its own, so kill reaches only its processes, but
//     ps and pgrep list the host's);
//   - network: the host's, so package downloads work, but without
//     NET_ADMIN nothing can change interfaces, routes or firewalls;
//   - recorded actions: systemctl, service, deb-systemd-invoke, invoke-rc.d,
//     sysctl (writing forms), modprobe, rmmod, insmod, nft, iptables and
//     ip6tables (and their -restore forms), ip, auditctl, mount, umount,
//     swapon, swapoff, reboot, shutdown, poweroff, halt, kexec, init,
//     telinit and the D-Bus clients are replaced, by bind mounts over every
//     copy on the host and first on PATH, by a recorder that logs the
//     literal argv and succeeds; their read-only forms (systemctl status,
//     sysctl KEY, ip addr show, …) run the real program.
//
// When the command ends (or its time runs out: it is then killed and the
// trial discarded), the helper lists every overlay's upper layer with the
// lower side of the same paths and the merged view (for /run: the copy
// taken at the start, not the live /run, which moves on), and reports, parsed
// here into [nightshift.Effects]: files created, changed and deleted (with
// the number of entries of a deleted tree), unified diffs of text files up
// to 256 KiB and sha256 hashes of every regular file, mode, owner, symlink
// and device-node changes, the recorded argv, and — when /etc/ssh changed —
// `sshd -t` and `sshd -T -C user=LOGIN,addr=CLIENT` run on the changed
// configuration (through sudo, LOGIN is the user that ran sudo and CLIENT
// the address in that login's own SSH_CLIENT, which sudo's env_reset
// drops). The trial's sshd runs chrooted in the trial's tree but as
// root beside the host, outside the command's sandbox: when the command
// also changed programs, libraries or the loader's configuration
// (/usr/bin, /usr/lib, /etc/ld.so.*, …) it is not run, and sshd -t is
// reported failed, saying why (the judge then refuses: without sshd's
// view the change to /etc/ssh cannot be judged; the model is told to
// change /etc/ssh in a command of its own). When the command changed a configuration whose own program
// has an offline syntax check, that check runs on the host's files and,
// chrooted, on the trial's, each under a 10 s timeout, and its results
// are [nightshift.Effects.Parses] (the judge refuses a configuration that
// parsed before and fails after): `visudo -c` when /etc/sudoers or
// /etc/sudoers.d changed (the whole tree with its includes, as sudo reads
// it: a file sudo skips is not checked); `apt-config dump` when
// /etc/apt/apt.conf or apt.conf.d changed; `apt-get -o
// Debug::NoLocking=1 -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
// indextargets` when sources.list or sources.list.d changed (it reads the
// source lists and the downloaded indexes, without network, lock or cache
// writes; apt's preferences are not read). A check runs only where its
// program is installed; on the trial's side, not when the command changed
// programs, libraries or the loader's configuration (as for sshd; the
// check is then reported skipped and refuses nothing), and not when what
// it reads holds a FIFO, socket or device (reported failed, with the
// path). `visudo -c` checks the grammar, not the files' owner and mode
// (sudo refuses a world-writable sudoers; the judge's mode rules see
// that). Not
// checked: systemd units (`systemd-analyze verify` runs offline, but it
// exits 0 on what systemd itself ignores with a warning, an unknown key or
// a bad value, and fails on a missing ExecStart program: it checks the
// unit's surroundings more than its grammar, and systemd loads a unit
// with those errors anyway), nftables
// files (`nft -c` sends the ruleset to the kernel to check, which needs
// CAP_NET_ADMIN in the host's network namespace: it would run against the
// live kernel, and the recorded nft actions are judged instead), audit
// rules (auditctl is a recorded action and has no offline parser), and
// sshd, whose `sshd -t` above is its own check (kept apart: it also
// reads `sshd -T` for the login). Left for later, absent from the
// Debian target the tests use: rsyslogd -N1, logrotate -d, chronyd -p.
// Facts of the host the changes alone do not show come
// with them: when the command changed what Linux-PAM reads (/etc/pam.d,
// /etc/security, /etc/securetty, /etc/nologin, a module directory, a file
// a PAM line names), the PAM files a login reads (/etc/pam.d, /etc/security's tables, /etc/securetty,
// /etc/nologin, the files PAM lines name) and whether each module a PAM
// line names exists, both on the host and in the trial, with the login's
// groups ([nightshift.PAMView]: the judge runs the stacks on both); the
// programs created in /usr/local/sbin or /usr/local/bin that hide a
// system program of the same name in root's PATH; the worker's address
// (SSH_CONNECTION of the helper's session or its nearest ancestor); and
// /etc/hosts, hosts.allow, hosts.deny, hostname, fstab and the
// alternatives database (/var/lib/dpkg/alternatives/*) diffed whole.
// LOGIN is [Config.Login], else SUDO_USER, else the helper's user. The
// command's exit status and output are kept too.
// A helper
// that stops before it has gathered the effects fails the trial
// ([ErrHelper]) rather than report a command without them.
//
// Files that are not regular files (FIFOs, sockets, device nodes) are
// reported as effects (kind other, or device) and never opened: a FIFO
// blocks its reader. A FIFO, socket or device under /etc/ssh makes the
// sshd check fail with the path named ("sshd would block or fail reading
// it") without running sshd; the PAM facts skip the files a PAM line
// names that are not regular. What the helper cannot see coming (an
// Include of a FIFO outside /etc/ssh, a PAM module path that is one) is
// bounded: sshd -t and -T run under a 10 s timeout, the facts for the
// judge under the command's timeout (past it the sshd check fails with
// that reason), and the whole trial under three times the timeout plus
// 30 s on the host. [Sandbox.TryBound] (three times the timeout plus a
// minute) bounds [Sandbox.Try] on this side whatever the host does, and
// Try's ctx bounds it too.
//
// The helper keeps the processes per trial few (each costs a scheduling
// slot on a busy host): the recorder's binds, /dev/pts, /dev/shm, the
// fresh /dev, /sys and /run and the read-only binds under the command's
// /proc are each mounted by one `mount -a` over a table of them (the
// ones it did not mount are mounted one by one, as a fallback), and the
// effects are gathered with one find per side of each overlay and one
// sha256sum per batch.
//
// [Sandbox.Commit] applies a trial's file changes to the real file
// systems, file by file (copied beside, then renamed over), after checking
// that every path still holds what the sandbox saw (else a
// [*ConflictError] and nothing is applied), keeping each pre-image under
// /var/lib/nightshift/undo/ID; [Sandbox.Undo] puts them back, last first,
// after the same check against what the commit left. A file is committed
// with the content, mode, owner and times the trial left, which the
// effects show and the judge read, but never with the trial's extended
// attributes, which they do not show: a changed file keeps the host's own
// (its ACL, file capability or SELinux label), a new file gets none, and
// an ACL or capability the command set, like the overlay's own marks,
// stays in the sandbox. [Sandbox.RunActions]
// runs approved actions as literal argv. [Runner] ties it together for the
// worker: Try, [safety.JudgeEffects], Commit or Discard, RunActions. The
// judge reads a trial's raw effects; the Exec's Evidence carries them
// redacted ([nightshift.Effects.Redacted]), so no password hash or private
// key leaves the Runner; the pre-images undo needs byte for byte stay on
// the host, written under the helper's umask 077. With
// a lockout Guard ([RunnerConfig.Guard]) every commit runs under
// [lockout.Guard.Protect]. A commit without recorded actions is marked
// files-only ([lockout.ArmOptions.FilesOnly]): its rollback restarts sshd
// only when it touched /etc/ssh. When the worker's login fails whatever a
// command did (before its commit: the trial is discarded, nothing is
// applied; or still after its undo), Run returns an error matching
// [lockout.ErrLockedOut] and from then on runs nothing on the host: every
// later Run returns that error at once, for the worker to end the host as
// failed with that reason.
//
// # What it does not guarantee
//
// The sandbox shares the host's kernel and network: a kernel bug, a
// resource the command exhausts (disk through the tmpfs, memory, PIDs
// where no pids cgroup limits it) or traffic it sends are not contained.
// Changes to /run are recorded, judged and committed like any other file's
// (a runtime unit, a /run/sysctl.d drop-in); a /run file the host changed
// since the copy stops the commit, and so does a /run tree the command
// deleted that holds sockets or FIFOs on the host (the trial never saw
// them). A command whose effect on
// the running system is reached other than through the recorded programs
// and the file systems (a TCP service on the host's network, a running
// daemon that rereads a changed file before the commit) escapes the
// judge. Programs are judged by their effects in the sandbox; a program
// that behaves differently there (it checks for a namespace, or for the
// time) may do otherwise for real.
//
// # Concurrency
//
// A Sandbox and a Runner are safe for concurrent use when their
// nightshift.Runner is. Trials are independent; two commits that touch the
// same path conflict rather than overwrite each other.
package sandbox
