// Package debtarget starts a disposable Debian 12 host for end-to-end tests
// of real SCAP Security Guide rules: a real root file system whose /etc the
// remediations really change, judged by a real OpenSCAP.
//
// The root is debootstrap's minbase bookworm with openssh-server, bookworm's
// openscap-scanner 1.3.7 and linux-base (without it SSG's kernel platform
// check marks every ssh and aide rule notapplicable), plus trixie's
// ssg-debian and ssg-base 0.1.76, which ship ssg-debian12-ds.xml
// ([DatastreamPath]), with apt's lists and the .debs of sudo, auditd and
// libpam-pwquality in its apt cache so SSG's package_* fixes work without
// the network. scripts/debian-target.sh builds it from the machine's Debian
// mirror and caches it as a zstd tarball in /var/cache/nightshift, or
// $NIGHTSHIFT_CACHE, under a lock so parallel test packages build it once.
// [Start] builds it when the tarball is absent and otherwise only unpacks it
// (docs/benchmarks.md has the times and the size). The tarball is never
// committed.
//
// [Start] unpacks the root into a fresh directory (Dir/lower) and mounts,
// in this process's mount namespace, an overlay over it at Dir/root
// ([Target.Root]: the target's files with its writes, which go to
// Dir/upper; the unpacked tree never changes). The overlay is the target's
// root and a superblock of its own, so a remount of / inside the target
// (remount,ro, errors=…, which a target that keeps CAP_SYS_ADMIN can run)
// changes the overlay, never the file system Dir is on (this machine's
// root): a bind mount of the tree, as before, shared its superblock.
// A recording sandbox inside stacks its overlays on that one (the kernel
// allows two levels) with its upper layers on the target's /run, a tmpfs.
// Start then runs the root's own
// sshd as PID 1 of new mount, PID, UTS and IPC namespaces (unshare --fork
// --propagation private --kill-child), chrooted into the root, with a
// private /proc whose /proc/sys is read-only, a read-only /sys (a sysfs
// mounted from a throwaway network namespace: sysfs has one superblock per
// network namespace, and one mounted in this machine's would be this
// machine's /sys superblock, which a remount inside would change), a minimal
// /dev (its own null, zero, full, random, urandom and tty nodes, never binds
// of the host's, which a chmod inside would change on the host, and a
// private devpts), private /run and /tmp, its own hostname, and a bounding set without CAP_SYS_ADMIN,
// CAP_SYS_MODULE, CAP_SYS_BOOT, CAP_SYS_TIME, CAP_SYS_RAWIO, CAP_MKNOD,
// CAP_SYS_PTRACE, CAP_NET_ADMIN and other dangerous capabilities, so
// commands run on it cannot remount, reach the host's processes, devices,
// hostname, sysctls or mounts. The network namespace is the host's: the
// target listens on 127.0.0.1 only.
//
// The sshd is a control sshd: its configuration, host key and
// authorized_keys live in /etc/nightshift inside the root, it listens on a
// free 127.0.0.1 port, accepts only the generated key for root, and never
// reads /etc/ssh/sshd_config, so remediations of /etc/ssh/sshd_config (the
// file SSG checks) cannot lock the worker out. The root's own host keys are
// generated at each start. With Options.SudoLogin the target also has
// [LoginUser], an unprivileged login with passwordless sudo (installed from
// the root's apt cache) that the control sshd accepts for the same key,
// from the login's own ~/.ssh/authorized_keys: [Target.LoginConfig] is the
// worker's login as a hardened fleet has it (root's control login stays).
//
// Every file system a target mounts is then its own superblock: the
// overlay, proc (its own PID namespace's), sysfs, devpts (newinstance) and
// the tmpfs of /dev, /run and /tmp. What stays shared with this machine is
// the kernel behind them: a target that keeps CAP_SYS_ADMIN and CAP_MKNOD
// (Options.Sandbox) could remount its /sys read-write and write this
// machine's kernel attributes, make a node of this machine's disk and
// mount it (the same superblock as this machine's root), or mount a sysfs
// of its own, which in Start's target (this machine's network namespace)
// is this machine's /sys superblock (the recording sandbox's read-only
// /sys is one; the commands it runs lack CAP_SYS_ADMIN). Commands
// committed on the target are what the safety judge lets through (for
// mount: remounts only, and of the target's own mounts those reach only
// the target).
//
// [Target.Close] kills the namespaces' PID 1 (which ends every process in
// them and with them every mount), unmounts the overlay (never lazily),
// checks /proc/self/mountinfo for mounts
// left under the target's directory ([ErrMountsLeft]; the files are then
// kept) and removes the directory. A test process that dies takes the target
// with it (the parent-death signal), and a reaper (a shell that waits on a
// pipe from the test process) unmounts its overlay, which lives in this
// machine's mount namespace. Start needs root, overlayfs, unshare, setpriv,
// chroot, tar, zstd and ssh-keygen on the machine; it returns [ErrNotRoot]
// otherwise.
//
// [StartSystem] starts a variant for tests of lockouts (package lockout),
// its root an overlay as Start's and its /sys its own network namespace's: a
// [SystemTarget] whose worker logs in through the root's own sshd, the one
// /etc/ssh/sshd_config configures, on port 22 of the target's own network
// namespace (reached through a loopback forwarder on this machine, each
// connection a new one inside), started at boot and restarted, reloaded or
// stopped by `systemctl … ssh` (a shim with ssh.service's semantics: sshd
// -t before a start or reload, a restart that leaves it down when sshd -t
// fails) or /etc/init.d/ssh, as on a Debian host; with root and an
// unprivileged login with sudo ([LoginUser]) authorized for one key, nft
// copied in when this machine has it, and CAP_NET_ADMIN and
// CAP_AUDIT_CONTROL kept (its firewall is its own; pam_loginuid).
// [SystemTarget.Exec] runs a command inside it through nsenter, not SSH.
//
// A Target and a SystemTarget are safe for concurrent use; Close is
// idempotent.
package debtarget
