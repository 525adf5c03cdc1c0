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
// [Start] mounts, in this process's mount namespace, an overlay at
// Dir/root ([Target.Root]: the target's files with its writes, which go to
// Dir/upper) over the unpacked root (Dir/lower links to it). The tarball is
// unpacked once, beside it (named after its size and modification time),
// and that tree is the read-only lower layer of every target of every
// process: an overlay never changes it. The overlay is the target's
// root and a superblock of its own, not the file system Dir is on (this
// machine's root, which a bind mount of the tree shared): a remount of /
// inside the target (remount,ro, errors=…) fails, since this machine's
// root mounted that superblock, and could reach only the overlay if it
// did not. A recording sandbox inside stacks its overlays on that one (the
// kernel allows two levels) with its upper layers on the target's /run, a
// tmpfs.
//
// Start then runs the root's own sshd as PID 1 of a new PID namespace, in
// a user namespace of its own: user and group IDs 0 to 65535 mapped to the
// same IDs on this machine (so every file of the root keeps its owner,
// inside and out, and setuid programs, sshd's privilege separation and
// sudo work as on a host), with new mount, UTS and IPC namespaces that
// belong to it. Its root keeps full capabilities over what those
// namespaces own (mounts of tmpfs, overlay, devpts and binds, pivot_root,
// its hostname, its own network namespace's firewall in StartSystem's
// targets) and none over this machine: no devtmpfs, no mount of a block
// device, no mknod of a real device, no remount of a superblock this
// machine mounted (the overlay root among them), no module loading, no
// reboot, no clock, no raw I/O, no firewall or interface of this
// machine's network namespace (Start's target shares it and listens on
// 127.0.0.1 only).
//
// A user namespace alone is not enough: the target's root is this
// machine's uid 0, which the kernel lets write every sysctl,
// /proc/sysrq-trigger and every root-writable sysfs attribute through a
// writable mount, whatever its capabilities. So its kernel interfaces are
// mounted by this machine's root before the user namespace is entered (in
// Dir/kernel, seen only in the target's namespaces), which locks them in
// the target's mount namespace: a private /proc (its PID namespace's) with
// /proc/sys, /proc/sysrq-trigger, /proc/irq, /proc/bus, /proc/fs and
// /proc/acpi bound read-only, and a read-only /sys (a sysfs mounted from
// a throwaway network namespace: sysfs has one superblock per network
// namespace, and one mounted in this machine's would be this machine's
// /sys superblock), then bound into the root from inside (so / has no
// locked mount under it: a recording sandbox's overlay of / needs that).
// The target cannot make them writable, unmount the read-only parts of
// /proc, or mount a proc, or a sysfs that is not read-only, of its own
// (the kernel refuses a new proc or sysfs in a user namespace that would
// show more than the locked ones do); unmounting /proc or /sys whole only
// hides them from itself. Also made then: a minimal /dev (its own null,
// zero, full, random, urandom and tty nodes, never binds of the host's,
// which a chmod inside would change on the host); from inside, a private
// devpts, /run and /tmp, the hostname, and the root pivoted (this
// machine's root detached, not merely chrooted away).
// Start's sshd has a bounding set without CAP_SYS_ADMIN, CAP_SYS_MODULE,
// CAP_SYS_BOOT, CAP_SYS_TIME, CAP_SYS_RAWIO, CAP_MKNOD, CAP_SYS_PTRACE,
// CAP_NET_ADMIN and other dangerous capabilities; with Options.Sandbox it
// keeps CAP_SYS_ADMIN and CAP_MKNOD, which in the user namespace reach
// only the target's own mounts: a recording sandbox (package sandbox)
// builds its namespaces and overlays there as on a host (its overlays with
// userxattr, its /dev nodes read-only binds, its /proc a bind of the
// target's: see the helper).
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
// Every file system a target mounts is then its own superblock or one it
// cannot change: the overlay, proc (its own PID namespace's), sysfs,
// devpts (newinstance) and the tmpfs of /dev, /run and /tmp. What stays
// shared with this machine is the kernel behind them, reached through
// what the user namespace leaves to uid 0: files under /proc and /sys
// that are root-writable without a capability check are read-only to it
// (the list above is this kernel's; a kernel-wide file elsewhere in /proc
// that only checks the uid would be writable), and signals reach only
// processes of its own PID namespace. [SystemTarget.Exec] is the
// exception by design: it runs as this machine's root with all its
// capabilities, for tests that must reach a locked-out target.
//
// [Target.Close] kills the namespaces' PID 1 (which ends every process in
// them and with them every mount), unmounts the overlay (never lazily),
// checks /proc/self/mountinfo for mounts
// left under the target's directory ([ErrMountsLeft]; the files are then
// kept) and removes the directory. A test process that dies takes the target
// with it (the parent-death signal), and a reaper (a shell that waits on a
// pipe from the test process) unmounts its overlay, which lives in this
// machine's mount namespace. Start needs root, user namespaces, overlayfs,
// unshare, nsenter, setpriv, chroot, tar, zstd and ssh-keygen on the
// machine (StartSystem ip too); it returns [ErrNotRoot] without root.
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
// copied in when this machine has it, and CAP_NET_ADMIN kept (its network
// namespace belongs to its user namespace: the firewall it changes is its
// own) and CAP_AUDIT_CONTROL (pam_loginuid; in the user namespace
// pam_loginuid leaves loginuid alone, as in a container).
// [SystemTarget.Exec] runs a command inside it through nsenter, not SSH.
//
// A Target and a SystemTarget are safe for concurrent use; Close is
// idempotent.
package debtarget
