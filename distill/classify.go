package distill

import (
	"strings"
)

// Class names a kind of error seen in a command's output. Its string is the
// short noun phrase the summary lines show, e.g. "dpkg lock held"; the
// classes themselves are the package's table (ClassifyError's doc lists
// the tools it knows), not API: callers read the phrase, events and
// lessons store it as text.
type Class string

// The error classes, most specific first. Lines of output are matched
// against the table in this order; a line counts for the first class that
// matches it, so "Could not open lock file … (13: Permission denied)" is
// classNotRoot, not classPermissionDenied.
const (
	classNotRoot          Class = "needs root"             // apt/dnf run without root
	classSudoPassword     Class = "sudo wanted a password" // sudo without NOPASSWD
	classDpkgLock         Class = "dpkg lock held"         // apt/dpkg: another process holds the lock
	classRPMLock          Class = "rpm lock held"          // dnf/yum: another process holds the lock
	classDpkgInterrupted  Class = "dpkg interrupted"       // apt: dpkg --configure -a needed
	classPackageNotFound  Class = "package not found"      // apt/dnf/yum: no such package
	classUnmetDeps        Class = "unmet dependencies"     // apt/dnf: dependency problems
	classRepoUnreachable  Class = "repository unreachable" // apt/dnf: fetch or metadata failure
	classDpkgError        Class = "dpkg error"             // dpkg: a package failed to configure
	classSedExpression    Class = "sed expression error"   // sed: bad s/// or command
	classUnitNotFound     Class = "unit not found"         // systemctl: no such unit
	classUnitMasked       Class = "unit masked"            // systemctl: unit is masked
	classUnitFailed       Class = "unit failed"            // systemctl: start/restart failed
	classNoSystemd        Class = "systemd not running"    // systemctl in a container without systemd
	classSSHDConfig       Class = "sshd config error"      // sshd -t: bad option or argument
	classSSHDPrivsep      Class = "sshd privilege separation dir missing"
	classSSHDHostKeys     Class = "sshd host keys missing"
	classAideConfig       Class = "aide config error"     // aide: configuration parse error
	classAideDatabase     Class = "aide database missing" // aide --check before aide --init
	classAideChanges      Class = "aide found changes"    // aide --check: files differ
	classAugeasError      Class = "augeas error"          // augtool: parse, path or save error
	classReadOnly         Class = "read-only file system"
	classDiskFull         Class = "disk full"
	classPermissionDenied Class = "permission denied"
	classNoSuchFile       Class = "no such file"
	classCommandNotFound  Class = "command not found"
	classTimeout          Class = "timeout"
	classKilled           Class = "killed"
)

// rule matches one line of output (compared in lower case) to a class: the
// line must contain one of any and, if all is set, every one of all.
type rule struct {
	class Class
	any   []string
	all   []string
	tools string // documentation: the tools whose messages the rule knows
}

// table is the classification table, most specific first. Each entry lists
// the lower-case fragments of the real messages it recognises.
var table = []rule{
	{class: classNotRoot, tools: "apt, dpkg, dnf, yum", any: []string{
		"are you root?",            // E: Unable to acquire the dpkg frontend lock (…), are you root?
		"could not open lock file", // E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)
		"requested operation requires superuser privilege", // dpkg
		"has to be run with superuser privileges",          // dnf
		"you need to be root to perform this command",      // yum
		"must be run as root", "must be root",
	}},
	{class: classSudoPassword, tools: "sudo", any: []string{
		"sudo: a terminal is required", "sudo: a password is required", "sudo: no tty present",
	}},
	{class: classDpkgLock, tools: "apt, apt-get, dpkg", any: []string{
		"could not get lock /var/lib/dpkg/", "could not get lock /var/lib/apt/",
		"unable to acquire the dpkg frontend lock", "unable to lock the administration directory",
		"dpkg status database is locked by another process", "waiting for cache lock",
		"unable to lock directory /var/lib/apt/",
	}},
	{class: classRPMLock, tools: "dnf, yum, rpm", any: []string{
		"waiting for process with pid", "another app is currently holding the yum lock",
		"can't create transaction lock", "is locked by another process",
	}},
	{class: classDpkgInterrupted, tools: "apt, dpkg", any: []string{
		"dpkg was interrupted, you must manually run",
	}},
	{class: classPackageNotFound, tools: "apt, dnf, yum, dpkg", any: []string{
		"unable to locate package", "has no installation candidate", "no match for argument",
		"unable to find a match", "no package ", "is not installed and no information is available",
		"couldn't find any package by", "package not found",
	}},
	{class: classUnmetDeps, tools: "apt, dnf", any: []string{
		"unmet dependencies", "depends on", "problem: conflicting requests", "nothing provides",
		"unable to correct problems, you have held broken packages",
	}},
	{class: classRepoUnreachable, tools: "apt, dnf, yum", any: []string{
		"failed to fetch", "temporary failure resolving", "could not resolve", "failed to download metadata",
		"cannot download repomd.xml", "some index files failed to download", "could not connect to",
		"cannot find a valid baseurl",
	}},
	{class: classDpkgError, tools: "dpkg, apt", any: []string{
		"dpkg: error processing", "sub-process /usr/bin/dpkg returned an error code",
		"errors were encountered while processing", "installed post-installation script subprocess returned error",
	}},
	{class: classSedExpression, tools: "sed", any: []string{
		"unterminated `s' command", "unknown option to `s'", "unknown command:", "unterminated address regex",
		"unmatched `{'", "unexpected `}'", "invalid reference \\", "extra characters after command",
		"missing command", "unterminated `y' command", "comments don't accept any addresses",
	}, all: []string{"sed:"}},
	{class: classUnitNotFound, tools: "systemctl, service", any: []string{
		".service not found", ".timer not found", ".socket not found", "could not be found.",
		": unrecognized service", "does not exist.", "loaded: not-found",
	}},
	{class: classUnitMasked, tools: "systemctl", any: []string{" is masked"}},
	{class: classUnitFailed, tools: "systemctl, journalctl", any: []string{
		"failed because the control process exited with error code", "failed with result",
		"start request repeated too quickly", "failed to start ", "main process exited, code=exited, status=",
		"active: failed", "job for ",
	}},
	{class: classNoSystemd, tools: "systemctl", any: []string{
		"system has not been booted with systemd", "failed to connect to bus",
	}},
	{class: classSSHDConfig, tools: "sshd -t", any: []string{
		"bad configuration option", "bad configuration options", "unsupported option",
		"deprecated option", "missing argument", "directive '", "invalid argument", "bad yes/no argument",
		"unsupported logging level", "unsupported forwarding", "ciphers spec", "bad key types",
		"no argument after keyword", "garbage at end of line",
	}, all: []string{"line "}},
	{class: classSSHDPrivsep, tools: "sshd", any: []string{"missing privilege separation directory"}},
	{class: classSSHDHostKeys, tools: "sshd", any: []string{"no hostkeys available", "could not load host key"}},
	{class: classAideDatabase, tools: "aide", any: []string{
		"couldn't open file /var/lib/aide", "open (read-only) failed for file", "database_in",
	}, all: []string{"aide.db"}},
	{class: classAideConfig, tools: "aide", any: []string{
		"syntax error, unexpected", "is not defined (line:", "configuration error", "error in configuration",
		"failed to compile regex", "unknown attribute", "cannot open config file", "aide.conf:",
	}},
	{class: classAideChanges, tools: "aide --check", any: []string{
		"aide found differences between database and filesystem", "found differences between database and filesystem",
	}},
	{class: classAugeasError, tools: "augtool", any: []string{
		"saving failed (run 'errors' for details)", "error: failed to execute command",
		"/augeas/files/", "syntax error in path expression", "invalid path expression",
		"iterated lens matched less than it should", "parse_failed", "failed to initialize augeas",
	}},
	{class: classReadOnly, any: []string{"read-only file system"}},
	{class: classDiskFull, any: []string{"no space left on device"}},
	{class: classPermissionDenied, any: []string{"permission denied", "operation not permitted", "access denied", "interactive authentication required"}},
	{class: classNoSuchFile, any: []string{"no such file or directory", "cannot stat", "does not exist"}},
	{class: classCommandNotFound, any: []string{"command not found", ": not found"}},
	{class: classTimeout, any: []string{"timed out", "timeout expired", "caught sigterm"}},
	{class: classKilled, any: []string{"killed", "out of memory: kill"}},
}

// Classes returns every class of the table, in table order.
func Classes() []Class {
	out := make([]Class, len(table))
	for i, r := range table {
		out[i] = r.class
	}
	return out
}

// maxClassifyBytes bounds how much output is read, from each end: errors
// are at the start or the end of the floods tools print.
const maxClassifyBytes = 256 << 10

// ClassifyError returns the error classes found in a command's output
// (stderr, stdout or both concatenated) and exit code, in order of first
// appearance and without repeats. Each line counts for the first class of
// the table it matches. The exit code adds what the shell and coreutils
// convey only through it: 124 (timeout(1)) is classTimeout, 126
// classPermissionDenied (not executable), 127 classCommandNotFound, 137
// (SIGKILL) classKilled — each only when the text did not already name it.
// Output that names no known error yields no class; exit code 0 adds none.
func ClassifyError(output string, exitCode int) []Class {
	var out []Class
	seen := make(map[Class]bool, 4)
	addClass := func(c Class) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	if len(output) > 2*maxClassifyBytes {
		output = output[:maxClassifyBytes] + "\n" + output[len(output)-maxClassifyBytes:]
	}
	for len(output) > 0 {
		line := output
		if i := strings.IndexByte(output, '\n'); i >= 0 {
			line, output = output[:i], output[i+1:]
		} else {
			output = ""
		}
		if c, ok := classifyLine(line); ok {
			addClass(c)
		}
	}
	switch exitCode {
	case 124:
		addClass(classTimeout)
	case 126:
		addClass(classPermissionDenied)
	case 127:
		addClass(classCommandNotFound)
	case 137:
		addClass(classKilled)
	}
	return out
}

func classifyLine(line string) (Class, bool) {
	if strings.TrimSpace(line) == "" {
		return "", false
	}
	if len(line) > 1024 {
		line = line[:1024]
	}
	lower := strings.ToLower(line)
	for i := range table {
		r := &table[i]
		if matches(lower, r) {
			return r.class, true
		}
	}
	return "", false
}

func matches(lower string, r *rule) bool {
	found := false
	for _, s := range r.any {
		if strings.Contains(lower, s) {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	for _, s := range r.all {
		if !strings.Contains(lower, s) {
			return false
		}
	}
	return true
}
