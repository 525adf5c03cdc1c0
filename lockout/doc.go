// Package lockout is the net under every committed change: it keeps a
// worker from locking its own SSH login out of a host, now or at sshd's
// next restart, and gets the host back when a change does.
//
// A [Guard] serves one login (Config.User) on one host. It holds no
// connection: each method takes the [nightshift.Runner] of the worker's
// kept connection (as root, or through sudo) and runs one shell script on
// the host per call (one round trip). Its parts:
//
//   - [Guard.Snapshot] and [Guard.Restore]: what the canary protects, before
//     a command. As root: the login's home directory mode and owner,
//     ~/.ssh, /etc/ssh, /etc/pam.d, /etc/security, the account files
//     (passwd, shadow, group, gshadow and their backups, login.defs,
//     subuid, subgid, shells), /etc/nologin, the sudoers files, and the nft
//     and iptables rulesets. As another login without sudo: the home
//     directory mode and ~/.ssh. Restore puts back contents, modes, owners
//     and mtimes exactly (each directory swapped in whole by rename, each
//     file renamed over), removes what did not exist at the snapshot,
//     replaces the rulesets, and then brings sshd back (below).
//   - [Guard.Arm] and [Guard.Disarm]: the dead-man switch. Arm, before a
//     change is committed, writes the switch on the host and starts its
//     trigger: a transient systemd timer (systemd-run --on-active) where
//     systemd runs as PID 1, else a sleeper detached in its own session
//     (setsid, nohup, no descriptor of the SSH session), so it outlives a
//     worker killed with SIGKILL and a dropped connection. Unless Disarm
//     reaches the host first, at the deadline the host runs the caller's
//     restore command (ArmOptions.Restore, for example the sandbox's undo
//     of the commit), restores the snapshot (ArmOptions.Snapshot, or one
//     Arm takes itself) and brings sshd back: sshd -t, then a restart of
//     ssh.service or sshd.service under systemd, elsewhere a stop of the
//     daemon in /run/sshd.pid and a start of it, waiting until it listens.
//     The switch and its trigger race through one atomic mkdir: exactly one
//     of them acts. The switch survives a change that takes the dynamic
//     loader away (ln -sfn /tmp /lib64: no program starts, not the kept
//     connection's shell, not /bin/sh): Arm records the loader's real file
//     (from the arming shell's memory map), its library directory, the
//     PT_INTERP path programs name, and the real paths of sh, ln and
//     mkdir; the trigger starts fire.sh through the loader's real file
//     (ld.so --library-path DIR /usr/bin/dash fire.sh), which needs no
//     PT_INTERP. fire.sh decides the race with mkdir through that loader,
//     checks whether programs start, and when they do not, links the
//     loader where the PT_INTERP path now leads (for the example,
//     /tmp/ld-linux-x86-64.so.2 -> the real loader). That link changes no
//     path the commit changed, so the commit's exact undo still runs and
//     puts /lib64 back; the link is then removed. We chose this over a
//     statically linked helper (none ships with Debian, and shipping a
//     binary per architecture is a build and trust burden) and over a
//     switch process kept running with only builtins (the undo, the
//     snapshot's restore and sshd's restart all need programs). Where the
//     PT_INTERP path's directory is gone (rm /lib64 rather than a new
//     target), or /usr was moved, no repair is attempted: the switch's log
//     says so, the worker's wait for the switch ends at its deadline with
//     an error matching [ErrLost] naming the switch and its state, and the
//     host is reported lost; nothing hangs. Disarm is idempotent; Disarm
//     of a switch that fired returns [ErrFired] every time. One switch is armed per host at a time
//     ([ArmedError] names the other); IDs are single-use.
//   - [Guard.Check]: the canary after every committed change. A fresh login
//     (Config.FreshLogin, see [SSHLogin]: its own TCP connection and
//     authentication as the login, never the kept connection, running a
//     trivial command; retried only while the connection is refused, as
//     during a reload of sshd) and, concurrently, the latent-lockout check
//     through the kept connection: sshd -T -C for the login (which fails
//     where sshd -t would), PermitRootLogin against a root login,
//     Deny/AllowUsers, Deny/AllowGroups, AuthenticationMethods,
//     PubkeyAuthentication, the port the worker reaches, AuthorizedKeysFile
//     holding the worker's key, readable by the login and, under
//     StrictModes, no foreign-owned or group/world-writable path from it up
//     to the home directory; the account (exists, shell executable and not
//     nologin or false, not expired, no forced or expired password, locked
//     where sshd checks the lock); /etc/nologin; and sshd's PAM account and
//     session stacks run as Linux-PAM runs them (control values, jumps,
//     includes and substacks; pam_deny, pam_nologin with the file,
//     pam_access rules, missing modules; other modules are taken to
//     succeed). A denying auth stack is a warning: key logins do not use it.
//     The [Result] is typed: OK, or lockouts with reasons such as "would lock
//     out root's SSH login at the next sshd restart: PermitRootLogin no".
//   - [Guard.Protect]: the whole flow around one commit (a pre-check,
//     snapshot, arm, commit, canary, then disarm, or undo through the kept
//     connection or by the switch and the canary again), returning an
//     [Outcome] whose Reason the worker records as the attempt's
//     rolled-back reason. The pre-check is a fresh login, run concurrently
//     with the latent check that sets the baseline: a change that locks
//     out only at sshd's next restart can slip past the net (a setting the
//     latent check does not model, such as MaxSessions 0 or
//     KexAlgorithms), and a later restart (an undo, a reload) makes it
//     live; the net must then not blame the next commit. When the
//     pre-commit login already fails (twice, a second apart), nothing is
//     committed and Protect
//     returns a [*LockedOutError] with Before set ("already failed before
//     this command"); when the login still fails after an undo, the
//     Outcome is rolled back and the error is a [*LockedOutError] without
//     Before. Both match [ErrLockedOut]: the host needs a person, and the
//     runners ([Runner], and sandbox's) then run nothing more on it (nor
//     after [ErrLost]). An
//     undo through the kept connection restarts sshd only when it must:
//     always, unless [ArmOptions].FilesOnly says the commit ran no program
//     (which could have reloaded sshd), and then only when the commit
//     changed /etc/ssh (compared with the snapshot before the undo). So
//     the rollback of an unrelated change no longer makes an earlier
//     latent change live. A fired switch always restarts sshd.
//   - [RequiresAccessChange]: the rules whose required change must lock the
//     worker's login out (sshd_disable_root_login for a root login), with
//     the change and the reason. The worker does not consult it before
//     attempting a rule: such a rule is attempted, and ends
//     needs_access_change when the judge refuses its fix, or the canary
//     rolls it back, as a lockout.
//
// Everything the package writes on a host lives under [DefaultDir]
// (/var/lib/nightshift/lockout: snap/ID and switch/ID, each mode 0700) or,
// for a login that is not root, ~/.local/state/nightshift/lockout; the
// only other writes are the transient systemd units
// nightshift-lockout-ID.timer and .service of an armed switch (in
// systemd's runtime directory, gone at reboot) and sshd's privilege
// separation directory /run/sshd when it is missing, as sshd's own init
// script makes it. Disarm removes the
// snapshot a switch took itself; [Guard.Remove] removes a snapshot.
//
// What it does not cover: a host that reboots while a switch is armed
// (transient timers and detached sleepers do not survive a reboot; Arm
// then records the switch as lost); Match blocks on the worker's address
// or port when neither Config nor SSH_CONNECTION gives them (a sudo login
// on a host where root cannot read other processes' environment); keys
// from AuthorizedKeysCommand; PAM modules other than those above;
// firewalls other than nft and iptables. The fresh login is the net for
// what the latent check cannot see, but only for changes that bite at
// once.
//
// A Guard is safe for concurrent use. The host-side state is not: run one
// Protect (or Arm … Disarm) per host at a time, as the worker does.
package lockout
