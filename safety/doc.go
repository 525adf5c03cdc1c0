// Package safety is Nightshift's security boundary: it decides, before a
// command proposed by a model runs as root on a host, whether it may run,
// and whether what it did may be applied.
//
// # Effects (the boundary)
//
// With the recording sandbox (package sandbox), every command runs first
// in a throwaway copy-on-write view of the host, and JudgeEffects decides
// from what it did there — files created, changed, deleted, their modes
// and owners, device nodes, the recorded argv of programs that change the
// running system, sshd's own view of a changed configuration — whether
// any of it reaches the host. The ban table then applies to effects, not
// to text: the many ways of writing a command that deletes /etc/ssh all
// delete /etc/ssh. JudgeEffects documents what it refuses. What it
// guarantees: no refused effect is applied, and no file change is applied
// over a path the host changed in between. What it does not: effects
// outside the file systems and the recorded programs (see package
// sandbox), changes it does not list as harmful (it bounds bulk changes
// outside a rule's declared paths, it does not understand every
// configuration file), and package-manager bookkeeping a command forges.
//
// # Rule scope (default-deny)
//
// Classes of harm do not converge against an adversary who has not seen
// them, so the judge also refuses by where a change is, not what it means.
// The host's control surfaces (ControlSurface; the table in
// effects_scope.go) are the trees whose content decides who can log in,
// what runs as root and when, how the host boots, and which packages and
// trust it takes: /etc, /usr (with /usr/local, /usr/share, /usr/lib/systemd),
// /bin, /sbin, /lib*, /boot, /opt, /var/lib/dpkg, /var/lib/apt,
// /var/lib/systemd/linger, /var/spool/cron, /var/spool/at, /root and the
// dotfiles of homes under /home. With EffectsPolicy.StrictScope, any
// change there — created, modified, deleted, mode, owner, link target —
// outside the rule's Scope is refused ("scope": "would change
// /etc/systemd/system/ssh.service.d/x.conf, outside the rule's paths
// /etc/ssh/sshd_config"), unless the package manager made it during a
// package operation (a path its lists say it installed, or its bookkeeping
// and maintainer-script outputs, pkgScriptPaths) or it is a directory
// created on the way to a scope path. Where the scope comes from: a YAML
// rule's paths, or for an SCAP rule the files its OVAL check reads
// (package scap, Datastream.Scope).
//
// The worker, worker run, the fleet and the demo judge every rule with
// StrictScope, whatever its scope is. A rule whose Scope is empty (a YAML
// rule without paths, an SCAP rule without an OVAL check or whose check
// reads what no path scopes: every mount point, the whole file system)
// may change nothing outside scratch but through the package manager, and
// the refusal says what its author can do, naming the rule
// (EffectsPolicy.Rule, ScopeNote): "would change /etc/foo.conf: rule
// my_rule declares no paths (add paths: to the rule)". The CLI warns when
// it loads such a YAML rule. There is no opt-out: a YAML rule cannot ask
// for the judge's classes alone, and paths: [/] is refused when it is
// loaded. Classes of harm do not converge against blind corpora (judged by
// them alone, rules without paths let the latest ones commit harm: see
// docs/sandbox-corpus.md), so what the rule's author declares it touches
// is the boundary; a rule that needs more declares more. EffectsPolicy's zero
// value (StrictScope off: only the MaxOutside bound outside Scope, the
// verb allow-list for actions) is for judging effects without a rule
// (measurements, tests), never the worker's.
//
// A scope path may be a pattern: its components after the first may hold
// path.Match patterns (*, ?, [...]), each matched against one component,
// never across a "/"; it covers every path whose leading components match
// (/home/*/.* is every home's dotfiles and what is under them, /home/*
// every home; ValidScopePath refuses a pattern in the first component, and
// "/"). Package scap derives /home/* for checks that list the homes from
// the password file.
//
// Under StrictScope the control surfaces are everything but scratch
// (scratchPlaces: /tmp, /var/tmp, /var/cache but debconf's answers,
// /dev/shm): /var/log (the journal, wtmp, btmp, lastlog, dpkg.log),
// /var/lib, /var/spool, /srv, /run (runtime units and sysctl.d, user
// units under /run/user), homes (not only their dotfiles) are refused
// outside the rule's paths like /etc. The package manager's own writes
// pass when the command ran a package operation: the paths its lists
// name, its bookkeeping and maintainer-script outputs (pkgScriptPaths)
// and its records and logs (pkgStatePaths, as regular files only: a
// dpkg.log made a link is refused).
//
// The scope also says what the rule's check reads besides files
// (EffectsPolicy.Units, Sysctl, Keys; scap derives them from the OVAL
// check, YAML rules declare units, sysctl and keys), and under
// StrictScope that scopes what else a command may do
// (effects_rulescope.go, effects_keys.go):
//
//   - recorded actions: unit verbs only on the rule's units (Units, or a
//     unit file in its paths), the units a package the same command
//     installed ships, and sshd's reload or restart; sysctl -w only of the
//     rule's kernel parameters, --system and -p only for a rule whose
//     check reads them; auditctl changes only for audit rules, and never
//     -D, -d, -W, -e 0, -e 2 or a never rule; nft and iptables changes only
//     for firewall rules; mount and swap only for rules whose paths hold
//     /etc/fstab (never / read-only); modprobe and rmmod only for
//     kernel-module rules (never -C, another configuration file);
//     timedatectl only for time rules; queries
//     (systemctl status, sysctl -n, nft list, iptables -L, auditctl -l)
//     always;
//   - lines inside the rule's own files: in every file of the scope whose
//     syntax is one setting a line, every added or removed line must set
//     one of the keywords the check reads (an sshd rule about
//     PermitRootLogin does not add an Include or change Subsystem; a
//     kptr_restrict rule does not set kernel.modules_disabled; a
//     PASS_MIN_DAYS rule does not set ENCRYPT_METHOD; a use_pty rule does
//     not add a NOPASSWD user spec; an rds rule does not install another
//     module; a /dev/shm rule does not change the / line of fstab).
//     Comments and blank lines are free; any other line is refused
//     ("would change LINE in FILE: the rule's check reads only the …"),
//     and deleting such a file is refused. The files and what names a
//     line's setting (kvFile in effects_keys.go): sshd's configuration and
//     drop-ins (the keyword, case-folded, = or blank); sysctl files (the
//     parameter, / read as .); unit files and drop-ins (the CamelCase
//     key); login.defs, faillock.conf, pwquality.conf(.d), pwhistory.conf,
//     auditd.conf, aide.conf (KEY VALUE, KEY=VALUE, KEY = VALUE); limits.conf
//     and limits.d (the item of domain type item value); systemd's
//     journald, logind, coredump, system, user… .conf and .conf.d drop-ins
//     (KEY=VALUE, [Section] headers free); /etc/default/* ([export]
//     KEY=VALUE; other shell is refused); chrony's configuration (the
//     directive); sudoers and sudoers.d (each option of a Defaults line;
//     any other line, #include and @includedir included, by its first
//     word); modprobe.d (the module of install, blacklist, options,
//     remove, softdep, alias; - read as _) and modules-load.d (the
//     module); /etc/fstab (the mount point, compared exactly). Keywords
//     are compared case-folded except mount points. A rule without known
//     keywords (Keys empty: SSG 0.1.76's faillock deny, interval and
//     unlock_time checks, mount_option_nodev_nonroot_local_partitions,
//     rules whose pattern is computed) has the lines of these files judged
//     by the check's line patterns where they are known (below), by the
//     classes alone where not.
//   - lines of the files no keyword names, by the check's own line
//     patterns (effects_lines.go; Keys' LinePatternPrefix entries, which
//     scap derives from the check's literal text patterns): PAM stacks,
//     audit rules files, profile scripts, cron tables, apt's lists and
//     configuration, and a key-value file of a rule whose keywords are
//     not known. Every line a command adds (comments and blank lines
//     free) must be matched, at least in part, by one of the patterns, as
//     the check reads the file (the diff's context lines around it
//     count); every line it removes must be matched by one, or be edited
//     into a line one matches (the same first word, at least half of its
//     words kept). So a pam_pwquality rule adds no pam_cracklib line and
//     a pam_unix remember rule no pam_pwhistory line; an audit rule adds
//     the -a or -w lines its check looks for, not -S all, -W, -D, a never
//     action, a read of every file under / or -e 2 (but the immutable
//     rule, whose pattern is -e 2); an umask rule does not empty
//     /etc/profile; an aide cron rule adds only the cron line its check
//     reads. A rule with a pattern Go's regular expressions cannot read
//     (a look-ahead other than (?!#), a back-reference) has these lines
//     judged by the classes alone;
//   - values (effects_values.go): where the check states the value its
//     pattern's first group must hold (an OVAL textfilecontent54 state's
//     subexpression, reached through criteria without a negation: a
//     literal, or every value the datastream gives the XCCDF value the
//     rule exports: default, selectors, profiles' set-values), a line a
//     command adds to the rule's files that the pattern matches must hold
//     a value one of them satisfies (Keys' ValueKeyPrefix entries,
//     ValueCheck): LoginGraceTime 0 (greater than 0), dcredit = 9 (at
//     most -1, -2 or 0), rp_filter = 0 (1 or 2), an fstab /tmp line
//     without nosuid (or with a typo in it). A value the comparison cannot
//     read (not a number for an int) is left to the classes;
//   - values naming files (valuePathHarm): a line added to sshd's
//     configuration or a key-value file of the scope whose value names a
//     secret (the shadow files, opasswd, sudoers, the host's private
//     keys) or a file in a directory another program reads whole
//     (sudoers.d, pam.d, cron.d, profile.d, sysctl.d, modprobe.d,
//     sshd_config.d, audit's rules.d, systemd/system, apt.conf.d, …) is
//     refused, but for include and HostKey keywords: Banner showing
//     the host key, AIDE's database_out over /etc/shadow, sudo's logfile
//     in sudoers.d;
//   - modes and owners (modeScopeHarm): for a rule whose check states
//     files' modes or owners (Keys' FileStatePrefix entries: the OVAL
//     file_state entities of its tests and its objects' filters, suid …
//     oexec, user_id, group_id), a mode or owner change in the rule's
//     paths may change only the bits and owners the check states: a rule
//     about group- and world-writable binaries does not strip setuid from
//     su and passwd (chmod -R 755) nor make /usr/sbin 0700, a rule about
//     /var/log's owner does not change its files' group;
//   - sysctl files: a line in the slash form (net/ipv4/ip_forward),
//     which sysctl applies and the check's patterns (dots) do not read;
//     and modprobe -C FILE, whose install and remove commands come from a
//     file the judge does not read as modprobe.d;
//   - the next boot (effects_bootargs.go): the kernel command line
//     (GRUB_CMDLINE_LINUX(_DEFAULT) in /etc/default/grub and grub.d,
//     /etc/kernel/cmdline) changes only in the arguments the check names
//     (Keys' KernelArgPrefix entries, which scap derives from the check's
//     patterns and states, a concat's literal parts included: mce,
//     l1tf, apparmor and security, nosmap): mem=1G, rootdelay=900,
//     break=premount, systemd.mask=ssh.service, an lsm= list beside the
//     rule's own are refused by name, added or removed; the boot menu's
//     timeouts and hidden style only for a rule whose check reads them;
//     an fstab line may add to its mount point only the options the
//     check's values name, restricting ones (nodev, nosuid, noexec, ro)
//     and neutral ones (defaults, rw, relatime, nofail, x-systemd.automount…),
//     never an owner, mode or size (uid=1000, mode=0777) or a changed
//     source or file system type, and a new entry only for a file system
//     in memory or a bind (no disk the host did not mount: a missing one
//     stops the boot); a modules-load.d line never loads a
//     module the rule's check disables (install or blacklist);
//   - the login shells' start-up files (effects_shellvars.go): a line
//     added to /etc/profile, /etc/profile.d, /etc/bash.bashrc or
//     /etc/environment assigns, declares, exports, makes read-only or
//     unsets only the variables the check names (the NAME= of its
//     patterns), parsed as bash parses it (package shell): declare -xr
//     TMOUT=900 HISTFILE=/dev/null sets HISTFILE, refused for a TMOUT
//     rule, as are LD_LIBRARY_PATH and PATH=.:$PATH;
//   - values naming places other users write (writablePathHarm): a line
//     added to a configuration file under /etc in the rule's paths whose
//     value names a path under /tmp, /var/tmp, /dev/shm, /run/user or a
//     home (pwquality's dictpath, an include of logrotate, rsyslog or
//     chrony, sudo's logfile, apt's signed-by) is refused, unless the
//     rule's paths name that place (polyinstantiated /tmp); fstab, mount
//     units and audit rules name places, not what a program reads, and
//     are not judged so;
//   - modes that take what the host needs (modesTakenHarm), whatever the
//     check's file states say of other bits: setuid or setgid cleared on
//     an executable unless the rule's paths name that file and the check
//     states the bit; a directory's search bit taken from its owner, or
//     from a class that keeps its read bit (a file mode applied to
//     directories: /var/log 0640); a file under /etc, /usr or /boot
//     given a non-root owner unless the check states owners;
//   - recorded actions that apply the rule's change: restart or reload
//     (never stop) of the unit whose own configuration file the command
//     changed in the rule's paths, the unit derived from the path
//     (/etc/systemd/logind.conf is systemd-logind, /etc/rsyslog.conf
//     rsyslog, /etc/audit/auditd.conf auditd; sshd's are judged as
//     sshd's); and a creation-mode line ($FileCreateMode 0640) whose mode
//     has none of the bits the check's file states forbid.
//
// What the scope guarantees, with StrictScope: no command changes any file
// outside the rule's paths but scratch, except through the package
// manager; no recorded action concerns what the rule's check does not
// read; where the check's keywords are known, no line of a key-value file
// of the scope (sshd's, sysctl's, units', login.defs, security/*.conf,
// auditd.conf, systemd's, /etc/default, chrony, aide, sudoers,
// modprobe.d, modules-load.d, fstab) sets another setting; no kernel
// argument the check does not name is added to or removed from the
// kernel command line, no fstab option beyond the check's, restricting
// and neutral ones, no module the check disables loaded from
// modules-load.d, no variable the check does not name set by an added
// line of the login shells' start-up files, no value of the scope's
// configuration naming a place other users write; where the
// check's line patterns are known and readable, no line is added to the
// scope's other files (PAM stacks, audit rules, profile, cron, apt) that
// the check does not look for, and none removed that it does not look
// for but in an edit; where the check states a value for its pattern, no
// added line it matches holds a value the check rejects under every
// value the datastream offers; for a permission or owner rule, no mode
// bit or owner the check does not state changes in its paths. What it
// does not: harm done with a value the check accepts (faillock deny = 1
// with even_deny_root where the check allows 1, a billion pam_unix rounds
// where it asks for at least 5000, disk_full_action = SINGLE; the classes
// below judge what they know: PermitRootLogin for the worker's login, a
// weakening sysctl value, a PAM stack that denies), values of checks
// whose pattern or state is built from variables the host computes (the
// faillock checks of SSG 0.1.76, login.defs' UMASK as a number), where a
// matching line goes (a PAM line the check names moved before pam_unix,
// -e 2 in a rules file that sorts first: augenrules emits -e last, the
// order of PAM lines is the lockout net's), the direction of a mode
// change among the bits the check states, files in scratch places (a
// script left in /var/tmp runs only if something else runs it), what a
// recorded action the rule may run does beyond its argv, the lines of a
// file whose rule's check reads it by metadata only (/etc/shells for a
// permission rule), file deletions inside the scope but of key-value
// files, what the rule's own keyword's line says beyond its name and
// value (a sudoers Defaults the rule names with a site-harmful value:
// noexec), the rule's own value where the check accepts it (TMOUT=1,
// disable_ipv6 = 1), a kernel argument the check names given a harmful
// value, the variables a profile script sets through means other than
// assignment, declare, export, readonly and unset (read, eval, source),
// and package operations: what a package installs, and a
// command that forges the package manager's lists or status, pass as the
// package manager's. Without StrictScope (the zero EffectsPolicy, never
// the worker's) the recorded actions are judged by the verb allow-list
// alone.
//
// Beyond the files the check reads, with StrictScope (effects_dropins.go,
// effects_siblings.go): the drop-in files the program reads with the
// check's file (sshd_config.d/*.conf, pwquality.conf.d/*.conf, systemd's
// X.conf.d/*.conf, rsyslog.d/*.conf, limits.d/*.conf, grub.d/*.cfg), and
// Debian's stand-ins for RHEL's PAM files (login, sshd, common-session for
// postlogin; the common-* stacks for system-auth and password-auth) are in
// the scope; every line added there must be one a pattern of the check
// matches or a value check accepts, every line removed an edit into such
// a line; the "all"/"default" sibling of the check's kernel parameter is
// in the scope at a value every setting of the check's value accepts.
// Guaranteed: a drop-in line no pattern or value of the check vouches for
// is refused (PermitRootLogin yes beside Compression no, minlen beside
// lcredit), a file name the program skips stays outside the paths. Not
// guaranteed: a value the check's pattern captures whole but whose state
// is built from a variable (RekeyLimit 16 1 vouched for by
// ^RekeyLimit\s+(.*)$, in the main file as in a drop-in); the host's own
// Include lines (Debian 12's are assumed, not read).
//
// A permission rule may also narrow a regular, non-executable,
// non-setuid file in its paths beyond the bits its check states: take
// group's and other's write, and their read outside /etc, /usr, /lib*,
// /boot and the program trees (log files to 0640); never add a bit, and
// never so for a directory or a program (narrowedBits).
//
// Kept whatever the rule (effects_shared.go): a directory at 1777 keeps
// every bit unless the rule's paths name it and its check states the bit;
// a changed file under /etc keeps the final newline it had; no line of the
// account files is removed for an account or group the check does not
// name (unless edited into one of the same name). sudo's @includedir name
// rule (isSudoersFile) decides which sudoers.d files grant: a name it
// skips grants nothing, and an @include of such a name is refused. The
// PAM judge runs the password stack too (passwd for root and the login):
// a required module the host lacks there fails every password change.
//
// Judged by meaning, whatever command made the change:
//
//   - the worker's login: sshd's effective configuration for it (sshd -T
//     in the trial), its keys and their modes, its account in the
//     password files (blanked, removed, expired, its password or account
//     made to expire within ExpiryBound days (30) that did not before —
//     with UsePAM sshd then refuses even its key login —, forced to change, a
//     shell that refuses logins, a new usable hash for it or root; locking
//     with "!" or "*" is allowed), and the shadow tools' backups
//     (/etc/shadow-, …) as the files they back up;
//   - PAM, run as Linux-PAM runs it on the host's files before and after
//     the command (the sandbox reads them): sshd's account, session and
//     auth stacks for the login from its address, sudo's (auth too) for a
//     login that is not root, the console's and su's for root; pam_deny,
//     pam_access, pam_time, pam_listfile, pam_securetty, pam_nologin,
//     pam_wheel (against the login's groups) and modules that do not
//     exist are evaluated, every other module is taken to succeed, and
//     only denials the command brings are refused; and by the same
//     evaluator the opposite harm (effects_pamweak.go): an auth stack
//     (sshd's, sudo's, the console's, su's) that denied a wrong password
//     before and lets it through after (the modules that check a password
//     fail, pam_rootok fails, pam_faillock authfail fails: a sufficient
//     authsucc first, pam_unix replaced, a jump past pam_deny), an account
//     stack that no longer reaches pam_unix's account checks, a password
//     stack of passwd that no longer reaches pam_unix or hashes with a
//     weaker method (md5, bigcrypt, descrypt); limits that allow no login
//     or leave a session unable to run;
//   - what runs or applies later, outside the sandbox: cron, units, init
//     and login scripts, package-manager and udev hooks (their commands
//     through BanList.Match), the loader's preload and paths, the boot
//     target, fstab's root and system mounts, the kernel command line,
//     sysctl files, login.defs' ID ranges and hashing, /etc/hosts'
//     localhost, /etc/hostname, tcp wrappers (Debian's sshd honours
//     hosts.deny), sudo without a password or for everyone, and for a
//     login that is not root, sudoers changes that take its root away
//     (its NOPASSWD grant removed, requiretty or noexec: the worker runs
//     sudo -n without a terminal);
//   - account takeover, whatever command made it: an account other than
//     root given UID or GID 0 (or, by Debian's fixed IDs, a privileged
//     primary group), a system account or one whose shell refused logins
//     given a login shell, an account unlocked or created with a usable
//     password hash (a group given a password), a member or administrator
//     added to a privileged group (root, sudo, wheel, adm, shadow, disk,
//     docker, lxd, kmem, sys, staff, …) in /etc/group or /etc/gshadow, the
//     root group renamed or removed, a key line added to any
//     authorized_keys (or /etc/skel's), sudoers granting an account that
//     had no grant (a user specification or a User_Alias member), including
//     rules from outside /etc/sudoers.d, letting LD_*, PYTHON*, PATH and
//     the like through env_keep or env_check, !env_reset, setenv,
//     !authenticate or a secure_path outside the system's directories, and
//     polkit rules that return YES;
//   - modes: the account files made writable by others, the hash files
//     readable by every user or a group other than root's and shadow's,
//     /etc/passwd or /etc/group unreadable to others; a setuid or setgid
//     program created or made so anywhere unless dpkg's lists name it; a
//     system directory made world-writable even with the sticky bit;
//   - the package manager: apt settings that replace its programs or
//     directories (Dir::*), add hooks (*-Invoke), proxy to loopback or
//     unroutable addresses, run a proxy detector, accept unsigned or
//     outdated repositories, or force dpkg; negative pins of vital packages;
//     source lists deleted, emptied, disabled or marked trusted; dpkg.cfg
//     force options (but the conffile choices), path-exclude outside the
//     documentation, other directories or a status logger; dpkg's status
//     edited outside a package operation; maintainer scripts written
//     without their package's file list changing;
//   - code and settings read later where hardening writes nothing (refused
//     whatever they hold): shell completions, DHCP client hooks, the
//     initramfs's scripts and hooks, generators of every kind, user
//     units, Python's sitecustomize and import lines of .pth files, git's
//     program settings (pager, editor, fsmonitor, hooksPath, aliases with
//     "!", includes); by meaning: anacrontab and /etc/skel's dotfiles
//     through BanList.Match, ifupdown's up/down commands, the initramfs's
//     BOOT, ROOT and shell in its configuration, an alternative pointed at
//     false or true or a program not registered for it, the CA bundle
//     emptied, PATH or LD_* in pam_env.conf and ~/.pam_environment, a PAM
//     file replaced by a FIFO, socket or directory, /lib64, /lib, /usr/lib,
//     /bin and the like replaced or repointed;
//   - recorded actions against an allow-list, kernel parameters by key
//     (crash on an error, cut the network, run out of ports, processes,
//     files or memory; disabling IPv6 only when the worker's address is
//     IPv4), firewall rules against the worker's port, swapoff -a, signals
//     to sshd other than HUP;
//   - system programs and libraries deleted, replaced or hidden in root's
//     PATH by /usr/local, files created where nothing reads them in
//     /etc/ssh or /boot;
//   - sshd settings that lock out only at its next reload or restart, from
//     sshd -T for the login after the command (effects_sshd.go), against
//     the facts of the worker's own SSH connection when the caller gives
//     them (EffectsPolicy.WithSSH, from sshexec's Client.SSHFacts; the
//     worker, worker run and fleet nights do): an AddressFamily without
//     the family of the address the worker dialled (not known: of its own
//     address as sshd saw it), listen addresses that no longer cover its
//     connection (a specific address must be the one it dialled,
//     EffectsPolicy.SSHAddr, trusted when sshd saw the connection come
//     from the worker's own end, SSHFrom; not known or translated on the
//     way: only a loopback worker's own address counts), Ciphers, MACs and KexAlgorithms with nothing in
//     common with what the worker's client (golang.org/x/crypto/ssh, its
//     own default lists) offers, host keys and PubkeyAcceptedAlgorithms
//     without a host key algorithm the worker's known_hosts accepts and
//     the algorithm its key logs in with (EffectsPolicy.HostKeyAlgorithms,
//     KeyAlgorithms; when not given, every type a Debian host has must
//     stay, judged only when the command touched those settings), a host
//     key file of a pinned type replaced or deleted, MaxSessions 0, a Banner
//     that is not a regular file, SetEnv or a login's ~/.ssh/environment
//     setting PATH, LD_* or the shell's start-up variables, and
//     PermitUserEnvironment turned on; new ways in for someone else
//     (TrustedUserCAKeys, AuthorizedPrincipalsFile/Command,
//     AuthorizedKeysCommand added or their files changed, an
//     AuthorizedKeysFile in a world-writable directory); and whatever
//     sshd reads now (effects_keys.go): sshd_config or ssh_config made a
//     directory, FIFO or link, an Include outside /etc/ssh, a Subsystem
//     whose program is not an sftp server, an AuthorizedKeysFile outside
//     the home, /etc and /usr, and the new ways in set in a drop-in sshd
//     does not read yet; the SSH client's configuration running programs
//     (ProxyCommand, LocalCommand, KnownHostsCommand, Match exec,
//     PKCS11Provider); and a PAM line with pam_exec;
//   - a configuration its own program accepted before the command and
//     rejects after it (effects_parse.go, nightshift.ConfigParse, which
//     package sandbox gathers: visudo -c for sudoers with its includes,
//     apt-config dump for apt.conf and apt.conf.d, apt-get indextargets
//     for the source lists), with the program's first error line; a
//     sudoers visudo rejects is a lockout for a login that is not root. A
//     configuration already broken on the host is not refused, nor one
//     whose program the sandbox did not run (absent, or the command
//     changed programs or libraries); systemd units, nftables files and
//     audit rules have no such check (see package sandbox);
//   - systemd and the boot (effects_boot.go, effects_firewall.go):
//     drop-ins of the SSH units beyond restart policy, ordering and
//     weights (conditions, address and socket filters, users, sandboxing,
//     listen streams, environments that change PATH or the loader), units
//     conflicting with an SSH unit, console gettys masked, ssh's rc links
//     or init script deleted, manager limits and environments for every
//     service, journald Storage=none, rsyslog discarding everything or
//     authentication, audit rules with -e 0, a late -D or never,task, the
//     boot's firewall files (/etc/iptables/rules.v4|v6, nftables.conf)
//     evaluated for the worker's next SSH connection, networkd links taken
//     down, a kernel command line with another root, init replaced or
//     auditing, the LSM or mitigations off, crypttab entries without
//     nofail; the actions stop, mask, disable, kill and freeze of the
//     audit, journal and syslog daemons, slices, core targets, gettys and
//     sessions, auditctl -D and -e 0, iptables rules whose negation leaves
//     SSH among what they drop, and kernel parameters set back against
//     SSG's hardening (ASLR, protected links, ptrace, kptr and dmesg
//     restrictions, SYN cookies) or network tables made too small.
//
// Not judged: the login's own account changes through means other than
// the password files (NSS modules, LDAP), PAM modules beyond those named
// (pam_succeed_if's conditions; a pam_exec line is refused), the loss of a
// login's own group membership in /etc/group, a privileged primary group
// on a distribution whose group IDs are not Debian's, configuration of
// other network services, package-manager records a command forges
// (dpkg's lists, the alternatives database: a command that writes them
// passes its files off as a package's), and anything a recorded action
// does that its argv does not show. The kinds of file refused whatever
// they hold are listed by path: a place the list does not name is judged
// only by the rules above. Among sshd's and the boot's settings: a
// firewall rule whose matches the judge does not read counts as possibly
// matching (its accept does not save the worker, its drop refuses); a
// specific ListenAddress is judged against the address the worker
// dialled, which behind a destination NAT that keeps the source address
// is not the host's (the lockout net's latent check, which reads the
// host's own from SSH_CONNECTION, is the net there), and without the
// caller's facts, or through a translation the judge sees, only for a
// loopback worker; a host key sshd presents from a file whose name
// does not say its type counts as of any type; nftables include files and iptables-restore input not at the
// standard paths, networkd's .network files that take addresses away by
// matching every link, and MaxStartups beyond what sshd -t rejects are not
// judged.
//
// # Text (the pre-filter)
//
// BanList.Match stays as a fast pre-filter and as the source of hints that
// tell the model what to write instead. With the sandbox, the worker
// refuses only what Match finds certainly harmful; what Match cannot
// analyse (entry "unanalysable") goes to the sandbox to be judged by its
// effects instead of being refused: failing closed moves from the text to
// the effects. Without a sandbox (--sandbox auto on a host where it cannot
// run, or off), Match alone decides, failing closed as below.
//
// BanList.Match analyses the command with package shell — the bash parser
// of mvdan.cc/sh/v3/syntax, bash dialect — the way bash would run it, and
// refuses it when:
//
//   - it cannot be analysed (fail closed): text bash and the parser could
//     read differently (control characters such as \r, \v, \f; invalid
//     UTF-8), text bash would not parse, more than 256 KiB, nesting deeper
//     than shell.MaxDepth; a program name produced by an expansion
//     (parameter, command or process substitution, arithmetic, glob, brace
//     expansion); a shell reading its script from a pipe, here-document,
//     here-string or /dev/stdin; eval, sh -c, su -c, a trap or a wrapper
//     given text that is not literal; a script written and run by the same
//     command line; an unknown option of a wrapper (so the wrapped program
//     cannot be told); aliases, loadable builtins; arithmetic on text that
//     is not a number (bash evaluates it, and it can run commands);
//   - any simple command that may run — behind every wrapper shell peels
//     (sudo, env, nice, nohup, timeout, setsid, flock, chroot, su, runuser,
//     script, nsenter, unshare, setpriv, pkexec, stdbuf, ionice, chrt,
//     taskset, time, command, builtin, exec, busybox, xargs, parallel,
//     watch, ssh, systemd-run, find -exec, eval, bash -c), inside command
//     and process substitutions, functions, loops and traps — matches an
//     entry of the ban table (Entries; table.go says what each covers), or
//     a file opened for writing (a redirection on any command, group,
//     subshell or exec; dd of=, tee, cp, script's log, time -o, …) is a
//     device, /proc/sysrq-trigger or a password file;
//   - inline interpreter code (python -c, perl -e, …), awk programs that
//     run commands, GNU sed's e, or deferred execution (at, batch, crontab,
//     tmux, screen) is used;
//   - an added pattern (a rule's banned field) matches the raw text or a
//     simple command's normal forms (quotes removed, braces expanded, "--"
//     dropped, options dropped, [x] globs resolved).
//
// Paths are matched as bash would resolve them: braces expanded, ~ and
// ~root resolved, variables assigned literally earlier and loop variables
// over literal lists substituted, the working directory followed through
// cd (a command line starts in /root, root's home), globs matched as
// patterns against the protected paths; GNU long options are matched by
// unique prefix.
//
// What it does not guarantee: the contents of files already on the host
// (a script run by path, a program's configuration, a file sourced) are not
// analysed, except a file the same command line writes; values only known
// when the command runs (a variable read from a file, a command's output)
// are judged unknown — refused where they could name a protected path for
// a destructive program (rm -r, recursive chmod), allowed elsewhere (a
// redirection to "$file"); a command can still do harm the table does not
// list. On its own it is defence in depth against a confused or careless
// model, not a sandbox.
//
// # Certain and uncertain refusals
//
// Every refusal says whether the text alone determines the banned effect
// (Ban.Certain; BanList.MatchCertain returns only those). Certain: a
// simple command of the table whose deciding words are all known (rm -rf
// /etc; x=/dev/sdb; dd of=${x%b}a; a=(stop ssh); systemctl "${a[@]}";
// kill -9 01; find / -delete -name x; apt-get remove '?name(openssh-server)';
// chmod 000 /etc/* or a loop, xargs or while-read over a listing of every
// entry), a write to a device or with > to the password files, a fork
// bomb, an added pattern. Uncertain (Certain unset): everything of the
// unanalysable entry; a value known only when the command runs where it
// could name a protected path, unit, PID, package or password (rm -rf
// "$d", systemctl "$verb" ssh, kill "$pid", usermod -p "$p", a variable
// that may come from the environment such as ${x:-stop}); inline code
// (python -c, awk system(), sed's e); deferred commands (at, tmux,
// crontab, cron or unit files with content not known); in-place edits of
// the password files (sed -i … /etc/shadow), whose result depends on the
// script. Match reports a certain refusal before an uncertain one found
// in the same command line. A caller with an effect-level check (a
// sandbox that runs the command and judges what it did) may send
// uncertain refusals there instead of refusing them; without one, it
// must refuse both.
//
// Values resolved before judging: parameter operators (${x:-w}, ${x:=w},
// ${x:+w}, ${x#p}, ${x%%p}, ${x/p/r}, ${x^^}, ${#x}, ${x:o:l}) on
// variables the command line sets or unsets, indexed arrays and their
// elements ("${a[@]}", ${a[1]}, a known leading part kept across
// branches), function arguments (a call's literal arguments are bound to
// "$1"…), read from a here-string, here-document or echo/printf pipe
// (while-read loops run once per line), xargs input from the same
// sources. A variable never assigned in the command line may come from
// the environment and stays unknown; where such a word stands for a verb
// or an option of a program whose harm lies there (systemctl "$verb" ssh,
// rm $opts /etc, iptables $x, find / $x, nft with any unknown word), the
// command is refused as uncertain.
//
// Also judged: find's expression left to right (an action before its
// tests acts on everything; -perm -0, -regex '.*' and -links +0 select
// nothing); every entry of a protected directory given to rm, chmod,
// chown or chgrp (chmod 000 /etc/*), also through a loop, xargs, parallel
// or while-read over a listing (find with no test, ls, printf or echo of
// a glob); kill of PID 1 or -1 in any numeric form (01, -01, +1, 0x1);
// package removals whose arguments are patterns that can name the SSH
// server (globs, apt regular expressions, ~nREGEX, ?name(…), ~i); globs
// as bash reads them ([!…], [[:alpha:]], extglob); cp and install into a
// directory (cp ./shadow /etc/); /proc/PID/task/TID/root; dpkg's
// --pre-invoke and --post-invoke hooks; a shell reading its script from a
// file descriptor (bash /dev/fd/3 3<<< …, refused as unanalysable); paths
// through a symbolic link the command line made (ln -s /etc e; rm -rf e/*).
//
// A BanList is immutable and safe for concurrent use; Match is a pure
// function of its input, runs nothing and reads no file. The differential
// tests run every corpus command under real bash in a sandbox and require
// the checker to block everything bash ran that is banned.
package safety
