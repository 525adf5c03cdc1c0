package distill

import (
	"strings"
)

// Class names a kind of error seen in a command's output. Its string is the
// short noun phrase the summary lines show, e.g. "dpkg lock held".
type Class string

// The error classes, most specific first. Lines of output are matched
// against the table in this order; a line counts for the first class that
// matches it, so "Could not open lock file … (13: Permission denied)" is
// ClassNotRoot, not ClassPermissionDenied.
const (
	ClassNotRoot          Class = "needs root"             // apt/dnf run without root
	ClassSudoPassword     Class = "sudo wanted a password" // sudo without NOPASSWD
	ClassDpkgLock         Class = "dpkg lock held"         // apt/dpkg: another process holds the lock
	ClassRPMLock          Class = "rpm lock held"          // dnf/yum: another process holds the lock
	ClassDpkgInterrupted  Class = "dpkg interrupted"       // apt: dpkg --configure -a needed
	ClassPackageNotFound  Class = "package not found"      // apt/dnf/yum: no such package
	ClassUnmetDeps        Class = "unmet dependencies"     // apt/dnf: dependency problems
	ClassRepoUnreachable  Class = "repository unreachable" // apt/dnf: fetch or metadata failure
	ClassDpkgError        Class = "dpkg error"             // dpkg: a package failed to configure
	ClassSedExpression    Class = "sed expression error"   // sed: bad s/// or command
	ClassUnitNotFound     Class = "unit not found"         // systemctl: no such unit
	ClassUnitMasked       Class = "unit masked"            // systemctl: unit is masked
	ClassUnitFailed       Class = "unit failed"            // systemctl: start/restart failed
	ClassNoSystemd        Class = "systemd not running"    // systemctl in a container without systemd
	ClassSSHDConfig       Class = "sshd config error"      // sshd -t: bad option or argument
	ClassSSHDPrivsep      Class = "sshd privilege separation dir missing"
	ClassSSHDHostKeys     Class = "sshd host keys missing"
	ClassAideConfig       Class = "aide config error"     // aide: configuration parse error
	ClassAideDatabase     Class = "aide database missing" // aide --check before aide --init
	ClassAideChanges      Class = "aide found changes"    // aide --check: files differ
	ClassAugeasError      Class = "augeas error"          // augtool: parse, path or save error
	ClassReadOnly         Class = "read-only file system"
	ClassDiskFull         Class = "disk full"
	ClassPermissionDenied Class = "permission denied"
	ClassNoSuchFile       Class = "no such file"
	ClassCommandNotFound  Class = "command not found"
	ClassTimeout          Class = "timeout"
	ClassKilled           Class = "killed"
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
	{class: ClassNotRoot, tools: "apt, dpkg, dnf, yum", any: []string{
		"are you root?",            // E: Unable to acquire the dpkg frontend lock (…), are you root?
		"could not open lock file", // E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)
		"requested operation requires superuser privilege", // dpkg
		"has to be run with superuser privileges",          // dnf
		"you need to be root to perform this command",      // yum
		"must be run as root", "must be root",
	}},
	{class: ClassSudoPassword, tools: "sudo", any: []string{
		"sudo: a terminal is required", "sudo: a password is required", "sudo: no tty present",
	}},
	{class: ClassDpkgLock, tools: "apt, apt-get, dpkg", any: []string{
		"could not get lock /var/lib/dpkg/", "could not get lock /var/lib/apt/",
		"unable to acquire the dpkg frontend lock", "unable to lock the administration directory",
		"dpkg status database is locked by another process", "waiting for cache lock",
		"unable to lock directory /var/lib/apt/",
	}},
	{class: ClassRPMLock, tools: "dnf, yum, rpm", any: []string{
		"waiting for process with pid", "another app is currently holding the yum lock",
		"can't create transaction lock", "is locked by another process",
	}},
	{class: ClassDpkgInterrupted, tools: "apt, dpkg", any: []string{
		"dpkg was interrupted, you must manually run",
	}},
	{class: ClassPackageNotFound, tools: "apt, dnf, yum, dpkg", any: []string{
		"unable to locate package", "has no installation candidate", "no match for argument",
		"unable to find a match", "no package ", "is not installed and no information is available",
		"couldn't find any package by", "package not found",
	}},
	{class: ClassUnmetDeps, tools: "apt, dnf", any: []string{
		"unmet dependencies", "depends on", "problem: conflicting requests", "nothing provides",
		"unable to correct problems, you have held broken packages",
	}},
	{class: ClassRepoUnreachable, tools: "apt, dnf, yum", any: []string{
		"failed to fetch", "temporary failure resolving", "could not resolve", "failed to download metadata",
		"cannot download repomd.xml", "some index files failed to download", "could not connect to",
		"cannot find a valid baseurl",
	}},
	{class: ClassDpkgError, tools: "dpkg, apt", any: []string{
		"dpkg: error processing", "sub-process /usr/bin/dpkg returned an error code",
		"errors were encountered while processing", "installed post-installation script subprocess returned error",
	}},
	{class: ClassSedExpression, tools: "sed", any: []string{
		"unterminated `s' command", "unknown option to `s'", "unknown command:", "unterminated address regex",
		"unmatched `{'", "unexpected `}'", "invalid reference \\", "extra characters after command",
		"missing command", "unterminated `y' command", "comments don't accept any addresses",
	}, all: []string{"sed:"}},
	{class: ClassUnitNotFound, tools: "systemctl, service", any: []string{
		".service not found", ".timer not found", ".socket not found", "could not be found.",
		": unrecognized service", "does not exist.", "loaded: not-found",
	}},
	{class: ClassUnitMasked, tools: "systemctl", any: []string{" is masked"}},
	{class: ClassUnitFailed, tools: "systemctl, journalctl", any: []string{
		"failed because the control process exited with error code", "failed with result",
		"start request repeated too quickly", "failed to start ", "main process exited, code=exited, status=",
		"active: failed", "job for ",
	}},
	{class: ClassNoSystemd, tools: "systemctl", any: []string{
		"system has not been booted with systemd", "failed to connect to bus",
	}},
	{class: ClassSSHDConfig, tools: "sshd -t", any: []string{
		"bad configuration option", "bad configuration options", "unsupported option",
		"deprecated option", "missing argument", "directive '", "invalid argument", "bad yes/no argument",
		"unsupported logging level", "unsupported forwarding", "ciphers spec", "bad key types",
		"no argument after keyword", "garbage at end of line",
	}, all: []string{"line "}},
	{class: ClassSSHDPrivsep, tools: "sshd", any: []string{"missing privilege separation directory"}},
	{class: ClassSSHDHostKeys, tools: "sshd", any: []string{"no hostkeys available", "could not load host key"}},
	{class: ClassAideDatabase, tools: "aide", any: []string{
		"couldn't open file /var/lib/aide", "open (read-only) failed for file", "database_in",
	}, all: []string{"aide.db"}},
	{class: ClassAideConfig, tools: "aide", any: []string{
		"syntax error, unexpected", "is not defined (line:", "configuration error", "error in configuration",
		"failed to compile regex", "unknown attribute", "cannot open config file", "aide.conf:",
	}},
	{class: ClassAideChanges, tools: "aide --check", any: []string{
		"aide found differences between database and filesystem", "found differences between database and filesystem",
	}},
	{class: ClassAugeasError, tools: "augtool", any: []string{
		"saving failed (run 'errors' for details)", "error: failed to execute command",
		"/augeas/files/", "syntax error in path expression", "invalid path expression",
		"iterated lens matched less than it should", "parse_failed", "failed to initialize augeas",
	}},
	{class: ClassReadOnly, any: []string{"read-only file system"}},
	{class: ClassDiskFull, any: []string{"no space left on device"}},
	{class: ClassPermissionDenied, any: []string{"permission denied", "operation not permitted", "access denied", "interactive authentication required"}},
	{class: ClassNoSuchFile, any: []string{"no such file or directory", "cannot stat", "does not exist"}},
	{class: ClassCommandNotFound, any: []string{"command not found", ": not found"}},
	{class: ClassTimeout, any: []string{"timed out", "timeout expired", "caught sigterm"}},
	{class: ClassKilled, any: []string{"killed", "out of memory: kill"}},
}

// maxClassifyBytes bounds how much output is read, from each end: errors
// are at the start or the end of the floods tools print.
const maxClassifyBytes = 256 << 10

// ClassifyError returns the error classes found in a command's output
// (stderr, stdout or both concatenated) and exit code, in order of first
// appearance and without repeats. Each line counts for the first class of
// the table it matches. The exit code adds what the shell and coreutils
// convey only through it: 124 (timeout(1)) is ClassTimeout, 126
// ClassPermissionDenied (not executable), 127 ClassCommandNotFound, 137
// (SIGKILL) ClassKilled — each only when the text did not already name it.
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
		addClass(ClassTimeout)
	case 126:
		addClass(ClassPermissionDenied)
	case 127:
		addClass(ClassCommandNotFound)
	case 137:
		addClass(ClassKilled)
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
