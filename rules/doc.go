// Package rules defines Nightshift's compliance rules, loads and validates
// them, and evaluates a rule's check. Rules read from an SCAP datastream
// (SSG's XCCDF rules, checked with OpenSCAP) are package scap's.
//
// # Rule files
//
// Rules are read from a YAML file, or from every *.yaml and *.yml file
// directly inside a directory (in name order), with Load or Parse:
//
//	rules:
//	  - id: sshd_disable_root_login        # required, [a-z0-9_.-]+, unique across files
//	    title: Disable SSH root login
//	    description: Root must not log in over SSH.
//	    check: "grep -Eq '^[[:space:]]*PermitRootLogin[[:space:]]+no' /etc/ssh/sshd_config"  # required
//	    banned: ['systemctl (restart|stop) ssh']   # regular expressions added to the ban list
//	    hints: Edit /etc/ssh/sshd_config; validate with sshd -t.
//	    max_attempts: 20                     # 1..1000; 0 or absent: the worker's default
//	    paths: [/etc/ssh/sshd_config]        # the rule's scope: what its fix may change
//	    keys: [PermitRootLogin]              # the settings its check reads in those files
//	    units: [ssh.service]                 # the systemd units its check reads
//	    sysctl: [kernel.kptr_restrict]       # the kernel parameters its check reads
//
// paths is the rule's scope, and every rule is judged default-deny under
// the recording sandbox (safety.EffectsPolicy.StrictScope): a command that
// changes anything outside them but scratch (/tmp, /var/tmp, /var/cache,
// /dev/shm) and the package manager's own writes is refused. A rule
// without paths may change nothing else (Rule.ScopeNote is NoPathsNote,
// Rule.Undeclared is true: the CLI warns when it loads one, and a refusal
// says "rule ID declares no paths (add paths: to the rule)"); there is no
// opt-out, and paths: [/] is refused. A path is absolute, below /, and its
// components after the first may be path.Match patterns
// (/home/*/.bashrc; safety.ValidScopePath). units,
// sysctl and keys say what the check reads besides files, and scope what
// else a fix may do: systemctl verbs only on units (sshd's reload is
// always allowed), sysctl -w only of sysctl, auditctl, nft, iptables,
// mount, modprobe and timedatectl only for rules whose paths or units are
// about them; and in sshd's configuration and the sysctl files among
// paths, only lines setting keys (or sysctl) may change. Without keys,
// those lines are not limited; without units, only sshd's reload and the
// services of packages the fix installs are run. SCAP rules get all four
// from their OVAL check (package scap).
//
// Validation is strict and complete: unknown fields (with a suggestion for
// near misses such as max_attemps), wrong types, a missing or malformed id
// or check, out-of-range max_attempts, invalid or match-everything ban
// patterns, a check command that the ban list refuses, duplicate ids (naming
// both places), empty files, several YAML documents, files over
// MaxFileSize. Every problem of every file is reported at once as
// ValidationErrors, each a *ValidationError formatted "file:line: field: msg"
// with fields named like rules[2].banned[0]; all match ErrInvalid.
//
// # Ban list
//
// The ban list itself is package safety: a rule's banned patterns are
// validated with safety.CheckPattern and added to the built-in table by
// Rule.BanList; a check command that the built-in table refuses is a
// validation error, and Evaluate refuses it again before running it.
//
// # Checks
//
// A rule's check is a Check. ShellCheck is a shell command run on the
// target through the caller's nightshift.Runner: exit 0 means compliant (nightshift.CheckPass),
// 1..125 not compliant (nightshift.CheckFail), and 126, 127, other codes above 125, a
// signal or a timeout mean the check itself failed (nightshift.CheckError), which is
// never reported as fixed. Other packages implement Check: scap.Check runs
// OpenSCAP on the target. NewSet makes a Set of rules built in code (scap's
// Datastream.Set does).
//
// # Concurrency
//
// A *Set and a *BanList are immutable once returned and safe for concurrent
// use; Rule values returned by a Set are copies. ShellCheck.Evaluate is safe
// for concurrent use when the Runner is. The package has no mutable global
// state.
package rules
