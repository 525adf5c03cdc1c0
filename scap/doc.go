// Package scap reads SCAP source datastreams (XCCDF 1.2, as the SCAP
// Security Guide ships them) into Nightshift's rules, and checks those rules
// with OpenSCAP on the target.
//
// # Datastreams
//
// Load and Parse read a source datastream (or a bare XCCDF 1.2 file) of at
// most MaxSize bytes: its rules by short id (sshd_disable_root_login) or
// full id (xccdf_org.ssgproject.content_rule_…), their title, description
// and rationale as plain text, and its profiles with their selections and
// values resolved through the profiles they extend (Datastream.Profile).
// Datastream.Set builds a rules.Set from a profile: each rule has its short
// id, its text with the profile's values substituted, the values its check
// uses as hints, and a Check. Input that is not a datastream is an error
// matching ErrInvalid; unknown profiles and rules match ErrUnknownProfile and
// ErrUnknownRule; every error names the file.
//
// # Scopes
//
// Parse also derives each rule's FileScope (Datastream.Scope) from its
// OVAL check: the files its objects read — a textfilecontent54 or file
// object's filepath, or path and filename — through extend_definition,
// object sets and constant or literal variables. A path given as a
// regular expression is expanded to its literal alternatives and cut back
// to its literal directory (^/etc/sysctl.d/.*\.conf$ is /etc/sysctl.d). A
// check that reads no files (package_*_installed, service_*_enabled) has
// an empty scope. Paths the check computes on the host are derived where
// Debian's defaults say where they are: the home directories it lists
// from the password file are the pattern /home/* (their dotfiles,
// /home/*/.*, for a file name pattern ^\..*), and a value read from
// rsyslog's, AIDE's or auditd's configuration names the trees of
// valuesFrom (/etc/rsyslog.d and /var/log, /var/lib/aide,
// /var/log/audit). A check that reads every mount point or the whole file
// system is not Complete: no path scopes it. Datastream.Set gives each
// rule its scope as rules.Rule.Paths, and the worker judges every rule
// default-deny under it (safety.EffectsPolicy.StrictScope): any change
// outside it but scratch and the package manager's is refused. A rule
// whose scope stays empty where it should not (no OVAL check, or a check
// no path scopes) carries ScopeNote's reason as rules.Rule.ScopeNote,
// which the refusals quote; TestScopeSSGDebian12Unscoped lists them for
// SSG 0.1.76.
//
// The scope also says what the check reads besides files, which scopes
// the recorded actions and the lines changed inside the paths
// (rules.Rule.Units, Sysctl, Keys): the units of systemdunitproperty
// objects and the dependencies systemdunitdependency states require
// (service_auditd_enabled: auditd.service, auditd.socket), the kernel
// parameters of sysctl objects, and the keyword a textfilecontent
// pattern matches at the start of a line (^[ \t]*(?i)PermitRootLogin(?-i)[ \t]+…
// is permitrootlogin, folded to lower case as (?i) reads it), also after
// a newline inside the pattern (.*\n[^#]*(PASS_MIN_DAYS\s+\d+): login.defs
// read whole; \n^[ \t]*Storage after a [Coredump] header); with the
// module a modprobe install, blacklist, options, remove or softdep
// pattern names (^\s*install\s+rds\s+… is install and rds), the option
// of a sudo Defaults pattern (^[\s]*Defaults[\s]*[^!]\buse_pty is
// Defaults and use_pty) and the mount point of an fstab pattern
// (^[\s]*(?!#)[\S]+[\s]+/dev/shm[\s]+… is /dev/shm).
//
// Keys also carries what the judge needs to hold a fix to its check
// (package safety, effects_lines.go and effects_values.go), each entry
// marked by its prefix: the check's literal text patterns themselves
// (safety.LinePatternPrefix: the lines a fix adds to the rule's PAM
// stacks, audit rules, profile scripts must be lines they match), the
// mode bits and owners its file states state (safety.FileStatePrefix:
// the entities of the file_state of its tests and of its file objects'
// filters, gwrite, owrite, user_id…: what a permission or owner fix may
// change), and the values its textfilecontent54 states require of a
// pattern's first group (safety.ValueKeyPrefix and a safety.ValueCheck:
// the operation, and a literal or every value the datastream gives the
// XCCDF value the rule exports to the external variable; states reached
// through a negated criterion, several states under OR and patterns or
// values computed on the host give none).
//
// # Checks
//
// Check (a rules.Check) runs `oscap xccdf eval --profile P --rule R DS` on
// the target and maps the rule's XCCDF result: pass and fixed are
// nightshift.CheckPass, fail nightshift.CheckFail, notapplicable
// nightshift.CheckNotApplicable, and error, unknown, notchecked,
// notselected and informational nightshift.CheckError — never read as
// fixed. EvaluateMany checks several rules with one oscap run per
// datastream and profile.
//
// # Concurrency
//
// A *Datastream is immutable and safe for concurrent use; the values it
// returns are copies. Check.Evaluate and EvaluateMany are safe for
// concurrent use when the Runner is. The package has no mutable global
// state.
package scap
