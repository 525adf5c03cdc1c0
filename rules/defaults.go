package rules

import (
	"path"
	"regexp"
	"strings"
)

// The built-in bans. Each is a predicate over one simple command in
// canonical form, or over the raw command text, with the description shown
// to the model. They cannot be removed through any API.

type builtin struct {
	pattern, reason string
	match           func(*simple) bool
}

type rawBuiltin struct {
	pattern, reason string
	match           func(string) bool
}

var builtins = []builtin{
	{"rm -r or mv of /, /*, or a top-level system directory such as /etc, /usr, /var, /boot, /root (also via find -delete)",
		"deletes the operating system", deletesSystem},
	{"recursive chmod, chown, chgrp, chattr or setfacl of / or of a top-level system directory such as /etc, /usr, /var",
		"breaks the permissions of the whole system", recursivePermsOfRoot},
	{"mkfs, mke2fs, mkswap, wipefs, blkdiscard and partitioning or disk-erasing tools (fdisk, sfdisk, sgdisk, parted, cryptsetup luksFormat, ...)",
		"wipes or reformats disks", formatsDisk},
	{"dd, shred, cp, tee, truncate or a shell redirection writing to a device under /dev",
		"overwrites a disk", writesDevice},
	{"reboot, shutdown, halt, poweroff, kexec, init/telinit 0|1|6, systemctl reboot|poweroff|halt|rescue|emergency|isolate|suspend, writing to /proc/sysrq-trigger",
		"takes the host down", powersOff},
	{"iptables/ip6tables -F or a DROP/REJECT default policy, nft flush ruleset, nft flush|delete table, ufw reset, firewall-cmd --panic-on",
		"flushes the firewall", flushesFirewall},
	{"passwd -d, usermod -p '', chpasswd with an empty password, writing root:: into /etc/shadow",
		"deletes a password", deletesPassword},
	{"killing sshd (kill, pkill, killall), kill -1, systemctl stop|kill|disable|mask ssh/sshd, service ssh stop, removing openssh-server",
		"cuts off SSH access to the host", stopsSSH},
	{"ip link set ... down, ip addr flush, ip route flush, ifdown, ifconfig ... down, nmcli networking off, stopping the network service",
		"cuts off network access to the host", stopsNetwork},
}

var rawBuiltins = []rawBuiltin{
	{"fork bombs such as :(){ :|:& };:", "exhausts the process table", isForkBomb},
	{"reboot or power-off requests over D-Bus (login1/systemd1 Manager Reboot, PowerOff, Halt, KExec)", "takes the host down", dbusPower},
}

// opts splits args into options and operands; "--" ends the options.
func opts(args []string) (options, operands []string) {
	for i, a := range args {
		if a == "--" {
			return options, append(operands, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			options = append(options, a)
		} else {
			operands = append(operands, a)
		}
	}
	return options, operands
}

// hasFlag reports whether a short option letter (in any cluster) or a long
// option is present.
func hasFlag(options []string, short string, long ...string) bool {
	for _, o := range options {
		if strings.HasPrefix(o, "--") {
			name, _, _ := strings.Cut(o, "=")
			for _, l := range long {
				if name == l {
					return true
				}
			}
			continue
		}
		if short != "" && strings.ContainsAny(o[1:], short) {
			return true
		}
	}
	return false
}

var systemDirs = set("bin boot dev etc home lib lib32 lib64 libx32 opt proc root run sbin srv sys usr var")

var varRef = regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!-]`)

// targetPath resolves a path argument as far as possible: $HOME and ~ are
// /root (commands run as root), other unknown variables are empty (as when
// unset), relative paths are resolved against a known working directory.
// It returns "" when the path cannot be placed.
func targetPath(p, cwd string) string {
	p = strings.NewReplacer("${HOME}", "/root", "$HOME", "/root").Replace(p)
	p = varRef.ReplaceAllString(p, "")
	switch {
	case p == "":
		return ""
	case p == "~" || strings.HasPrefix(p, "~/"):
		p = "/root" + p[1:]
	case !strings.HasPrefix(p, "/"):
		if cwd == "" {
			return ""
		}
		p = cwd + "/" + p
	}
	return path.Clean(p)
}

func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// isRootish: / itself or a glob of its entries.
func isRootish(p, cwd string) bool {
	c := targetPath(p, cwd)
	if c == "/" {
		return true
	}
	dir, base := path.Split(c)
	return dir == "/" && hasGlob(base)
}

// isSystemTree: / , a glob of its entries, a top-level system directory or
// a glob of a system directory's entries.
func isSystemTree(p, cwd string) bool {
	if isRootish(p, cwd) {
		return true
	}
	c := targetPath(p, cwd)
	if c == "" {
		return false
	}
	dir, base := path.Split(c)
	if dir == "/" && systemDirs[base] {
		return true
	}
	top := strings.Trim(dir, "/")
	return !strings.Contains(top, "/") && systemDirs[top] && hasGlob(base)
}

var findFilters = set("-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -samefile -inum -newer -user -uid -group -gid -nouser -nogroup -perm -mtime -mmin -atime -amin -ctime -cmin -size -empty -links")

func deletesSystem(s *simple) bool {
	switch s.name() {
	case "rm":
		o, targets := opts(s.args())
		if !hasFlag(o, "rR", "--recursive") {
			return false
		}
		for _, t := range targets {
			if isSystemTree(t, s.cwd) {
				return true
			}
		}
	case "mv":
		_, operands := opts(s.args())
		for i, t := range operands {
			if i < len(operands)-1 && isSystemTree(t, s.cwd) {
				return true
			}
		}
	case "find":
		args := skipOpts(s.args(), set("-D -O"))
		var starts []string
		for len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "(" && args[0] != "!" {
			starts = append(starts, args[0])
			args = args[1:]
		}
		if len(starts) == 0 {
			starts = []string{"."}
		}
		destructive := false
		for i, a := range args {
			if findFilters[a] {
				return false
			}
			if a == "-delete" {
				destructive = true
			}
			if (a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir") && i+1 < len(args) {
				switch path.Base(args[i+1]) {
				case "rm", "shred", "unlink":
					destructive = true
				}
			}
		}
		if !destructive {
			return false
		}
		for _, t := range starts {
			if isSystemTree(t, s.cwd) {
				return true
			}
		}
	}
	return false
}

func recursivePermsOfRoot(s *simple) bool {
	switch s.name() {
	case "chmod", "chown", "chgrp", "chattr", "setfacl", "chcon", "restorecon":
	default:
		return false
	}
	o, targets := opts(s.args())
	if !hasFlag(o, "R", "--recursive") {
		return false
	}
	for _, t := range targets {
		if isSystemTree(t, s.cwd) {
			return true
		}
	}
	return false
}

var (
	alwaysFormat = set("mke2fs mkswap mkdosfs mkntfs mkexfatfs mkexfat wipefs blkdiscard pvremove vgremove lvremove mdadm-zero zerofree")
	// partitioning tools are allowed only with one of their listing options
	partitionListing = map[string]map[string]bool{
		"fdisk":  set("-l --list -x --list-details"),
		"sfdisk": set("-l --list -d --dump -J --json -s --show-size -V --verify -g --show-geometry -F --list-free --show-pt-geometry -r --reorder-dry-run"),
		"sgdisk": set("-p --print -v --verify -i --info -P --pretend -O --print-mbr -D --display-alignment -L --list-types"),
		"gdisk":  set("-l"),
		"cfdisk": set(""),
		"cgdisk": set(""),
	}
	partedWrites = set("mklabel mktable mkpart mkpartfs rm resizepart resize rescue mkfs move cp")
)

func formatsDisk(s *simple) bool {
	name, args := s.name(), s.args()
	switch {
	case strings.HasPrefix(name, "mkfs"), alwaysFormat[name]:
		return true
	case partitionListing[name] != nil:
		listing := partitionListing[name]
		for _, a := range args {
			if listing[a] {
				return false
			}
		}
		return true
	case name == "parted":
		for _, a := range args {
			for _, f := range strings.Fields(a) {
				if partedWrites[f] {
					return true
				}
			}
		}
	case name == "cryptsetup":
		for _, a := range args {
			switch a {
			case "luksFormat", "erase", "luksErase", "reencrypt", "luksKillSlot":
				return true
			}
		}
	case name == "zpool":
		return len(args) > 0 && (args[0] == "destroy" || args[0] == "labelclear")
	case name == "nvme":
		return len(args) > 0 && (args[0] == "format" || args[0] == "sanitize")
	case name == "hdparm":
		return hasFlag(args, "", "--security-erase", "--security-erase-enhanced", "--trim-sector-ranges", "--make-bad-sector", "--write-sector")
	case name == "badblocks":
		o, _ := opts(args)
		return hasFlag(o, "wn")
	}
	return false
}

var safeDevices = set("null zero full random urandom stdin stdout stderr tty console ptmx kmsg log")

// isDevice reports whether p is a device node that writing to may destroy
// data: anything under /dev except the harmless character devices, ttys,
// file descriptors and bash's /dev/tcp and /dev/udp.
func isDevice(p string) bool {
	c := path.Clean(p)
	rest, ok := strings.CutPrefix(c, "/dev/")
	if !ok {
		return false
	}
	top, _, _ := strings.Cut(rest, "/")
	switch {
	case safeDevices[rest], top == "fd", top == "pts", top == "shm", top == "mqueue", top == "tcp", top == "udp",
		strings.HasPrefix(rest, "tty"), strings.HasPrefix(rest, "stdout"), strings.HasPrefix(rest, "stderr"):
		return false
	}
	return true
}

func writesDevice(s *simple) bool {
	for _, r := range s.redirs {
		if r.writes() && isDevice(r.target) {
			return true
		}
	}
	name, args := s.name(), s.args()
	_, operands := opts(args)
	switch name {
	case "dd":
		for _, a := range args {
			if t, ok := strings.CutPrefix(a, "of="); ok && isDevice(t) {
				return true
			}
		}
	case "shred", "tee", "truncate", "fallocate", "wipe", "scrub":
		for _, t := range operands {
			if isDevice(t) {
				return true
			}
		}
	case "cp", "mv", "install", "rsync", "ddrescue", "pv", "cat":
		if name == "cat" || name == "pv" {
			return false
		}
		if len(operands) > 1 && isDevice(operands[len(operands)-1]) {
			return true
		}
	}
	return false
}

var (
	systemctlArgs  = set("-t -p -H -M -n -o -s --type --property --host --machine --lines --output --signal --kill-whom --kill-value --root --job-mode --state --when --message --what --image --timestamp --boot-loader-entry --boot-loader-menu --reboot-argument --check-inhibitors --drop-in")
	powerVerbs     = set("reboot poweroff halt kexec soft-reboot suspend hibernate hybrid-sleep suspend-then-hibernate sleep rescue emergency isolate default switch-root exit")
	powerUnits     = set("reboot.target poweroff.target halt.target kexec.target shutdown.target rescue.target emergency.target ctrl-alt-del.target soft-reboot.target final.target sleep.target suspend.target hibernate.target hybrid-sleep.target suspend-then-hibernate.target systemd-reboot.service systemd-poweroff.service systemd-halt.service systemd-kexec.service systemd-soft-reboot.service rescue.service emergency.service systemd-suspend.service systemd-hibernate.service")
	powerRunlevels = set("0 1 6 s S single")
)

// systemctlCall returns systemctl's verb and units.
func systemctlCall(args []string) (verb string, units []string) {
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			if !strings.Contains(a, "=") && systemctlArgs[a] {
				i++
			}
		case len(a) > 1 && a[0] == '-':
			if systemctlArgs[a[len(a)-2:]] {
				i++
			}
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) == 0 {
		return "", nil
	}
	return operands[0], operands[1:]
}

func powersOff(s *simple) bool {
	for _, r := range s.redirs {
		if r.writes() && path.Clean(r.target) == "/proc/sysrq-trigger" {
			return true
		}
	}
	name, args := s.name(), s.args()
	switch name {
	case "reboot", "shutdown", "halt", "poweroff", "kexec", "systemd-reboot", "coreboot":
		return true
	case "init", "telinit":
		_, operands := opts(args)
		return len(operands) > 0 && powerRunlevels[operands[0]]
	case "systemctl":
		verb, units := systemctlCall(args)
		if powerVerbs[verb] {
			return true
		}
		switch verb {
		case "start", "restart", "reload-or-restart", "try-restart", "enable":
			for _, u := range units {
				if powerUnits[u] {
					return true
				}
			}
		}
	case "tee":
		for _, a := range args {
			if path.Clean(a) == "/proc/sysrq-trigger" {
				return true
			}
		}
	}
	return false
}

var iptablesName = regexp.MustCompile(`^(ip6?tables|ebtables|arptables)(-legacy|-nft)?$`)
var nftFlush = regexp.MustCompile(`(^|[;{\s])(flush\s+(ruleset|table)|delete\s+(table|ruleset))\b`)

func flushesFirewall(s *simple) bool {
	name, args := s.name(), s.args()
	switch {
	case iptablesName.MatchString(name):
		for i, a := range args {
			if a == "--flush" || (len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'F')) {
				return true
			}
			// A DROP or REJECT default policy locks the worker out as surely
			// as a flush of the rules that let it in.
			if (a == "-P" || a == "--policy") && i+2 < len(args) {
				if p := strings.ToUpper(args[i+2]); p == "DROP" || p == "REJECT" {
					return true
				}
			}
		}
	case name == "nft":
		_, operands := opts(args)
		return nftFlush.MatchString(strings.Join(operands, " "))
	case name == "ufw":
		_, operands := opts(args)
		return len(operands) > 0 && operands[0] == "reset"
	case name == "firewall-cmd":
		return hasFlag(args, "", "--panic-on")
	}
	return false
}

var emptyPasswordLine = regexp.MustCompile(`(?m)^\s*[^:\s]+:\s*$`)

func deletesPassword(s *simple) bool {
	name, args := s.name(), s.args()
	switch name {
	case "passwd":
		o, _ := opts(args)
		return hasFlag(o, "d", "--delete")
	case "usermod":
		for i, a := range args {
			switch {
			case a == "-p" || a == "--password":
				if i+1 < len(args) && args[i+1] == "" {
					return true
				}
			case a == "--password=":
				return true
			}
		}
	case "chpasswd":
		for _, in := range s.stdin {
			if emptyPasswordLine.MatchString(in) {
				return true
			}
		}
	}
	return writesEmptyRootShadow(s)
}

// writesEmptyRootShadow: an in-place edit, a redirection or tee writing
// /etc/shadow with "root::" in the command or its input. Reading the file
// (grep '^root::' /etc/shadow) is allowed.
func writesEmptyRootShadow(s *simple) bool {
	if !shadowRoot.MatchString(s.text) && !shadowRoot.MatchString(strings.Join(s.stdin, "\n")) {
		return false
	}
	for _, r := range s.redirs {
		if r.writes() && path.Clean(r.target) == "/etc/shadow" {
			return true
		}
	}
	o, operands := opts(s.args())
	inPlace := false
	switch s.name() {
	case "sed", "perl", "ruby":
		inPlace = hasFlag(o, "i", "--in-place")
	case "tee", "cp", "mv", "install", "dd":
		inPlace = true
	}
	if !inPlace {
		return false
	}
	for _, t := range append(operands, s.args()...) {
		if path.Clean(strings.TrimPrefix(t, "of=")) == "/etc/shadow" {
			return true
		}
	}
	return false
}

var sshUnit = regexp.MustCompile(`^(sshd?|openssh-server|openssh-daemon)(@[^.]*)?(\.service|\.socket)?$`)
var sshPackage = regexp.MustCompile(`^openssh(-server)?(:[a-z0-9]+)?(=.*)?$`)

// isHUP reports whether a signal name or number is SIGHUP, which makes
// sshd reload its configuration without dropping sessions; that is allowed.
func isHUP(sig string) bool {
	sig = strings.TrimPrefix(strings.ToUpper(sig), "SIG")
	return sig == "HUP" || sig == "1"
}

// killArgs splits kill's arguments into the signal and the process ids.
func killArgs(args []string) (sig string, pids []string) {
	sig, i := "TERM", 0
	if len(args) > 0 {
		switch a := args[0]; {
		case (a == "-s" || a == "-n" || a == "--signal") && len(args) > 1:
			sig, i = args[1], 2
		case strings.HasPrefix(a, "--signal="):
			sig, i = strings.TrimPrefix(a, "--signal="), 1
		case a == "-l" || a == "-L" || a == "--list" || a == "--table":
			return "", nil
		case a == "--":
			i = 1
		case len(a) > 1 && a[0] == '-':
			sig, i = a[1:], 1
		}
	}
	for _, a := range args[i:] {
		if a != "--" {
			pids = append(pids, a)
		}
	}
	return sig, pids
}

// signalsHUP reports whether pkill's or killall's options select SIGHUP.
func signalsHUP(args []string) bool {
	for i, a := range args {
		switch {
		case (a == "-s" || a == "--signal") && i+1 < len(args):
			return isHUP(args[i+1])
		case strings.HasPrefix(a, "--signal="):
			return isHUP(strings.TrimPrefix(a, "--signal="))
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && isHUP(a[1:]):
			return true
		}
	}
	return false
}

func mentionsSSH(s string) bool { return strings.Contains(strings.ToLower(s), "ssh") }

func stopsSSH(s *simple) bool {
	name, args := s.name(), s.args()
	switch name {
	case "kill":
		sig, pids := killArgs(args)
		for _, p := range pids {
			if p == "-1" || (mentionsSSH(p) && !isHUP(sig)) {
				return true
			}
		}
	case "killall5":
		return true
	case "pkill", "killall", "skill", "slay":
		if signalsHUP(args) {
			return false
		}
		for _, a := range args {
			if mentionsSSH(a) && !strings.HasPrefix(a, "-") {
				return true
			}
		}
	case "systemctl":
		verb, units := systemctlCall(args)
		switch verb {
		case "stop", "kill", "disable", "mask", "freeze":
			for _, u := range units {
				if sshUnit.MatchString(u) {
					return true
				}
			}
		}
	case "service", "invoke-rc.d", "rc-service":
		_, operands := opts(args)
		if len(operands) >= 2 && sshUnit.MatchString(operands[0]) {
			switch operands[1] {
			case "stop", "force-stop", "disable", "zap":
				return true
			}
		}
	case "update-rc.d", "chkconfig", "rc-update", "sysv-rc-conf":
		_, operands := opts(args)
		if len(operands) >= 2 && sshUnit.MatchString(operands[0]) {
			switch operands[1] {
			case "disable", "remove", "off", "stop":
				return true
			}
		}
		if len(operands) >= 2 && (operands[0] == "del" || operands[0] == "delete") && sshUnit.MatchString(operands[1]) {
			return true
		}
	case "apt", "apt-get", "aptitude", "yum", "dnf", "microdnf", "zypper", "dpkg", "rpm", "pacman", "apk":
		return removesSSH(name, args)
	}
	return false
}

func removesSSH(name string, args []string) bool {
	o, operands := opts(args)
	removing := false
	switch name {
	case "dpkg":
		removing = hasFlag(o, "rP", "--remove", "--purge")
	case "rpm":
		removing = hasFlag(o, "e", "--erase")
	case "pacman":
		removing = hasFlag(o, "R", "--remove")
	}
	for i, op := range operands {
		if i == 0 {
			switch op {
			case "remove", "purge", "erase", "autoremove", "rm", "del", "uninstall":
				removing = true
				continue
			case "install":
				for _, p := range operands[1:] {
					if q, ok := strings.CutSuffix(p, "-"); ok && sshPackage.MatchString(q) {
						return true
					}
				}
			}
		}
		if removing && sshPackage.MatchString(op) {
			return true
		}
	}
	return false
}

var networkUnit = regexp.MustCompile(`^(networking|network|NetworkManager|systemd-networkd|wicked|netplan.*)(\.service|\.socket)?$`)

// prefixOf reports whether abbr abbreviates word the way ip and nmcli
// accept (a non-empty prefix).
func prefixOf(abbr, word string) bool { return abbr != "" && strings.HasPrefix(word, abbr) }

func stopsNetwork(s *simple) bool {
	name, args := s.name(), s.args()
	switch name {
	case "ip":
		_, ops := opts(skipOpts(args, set("-n -b -batch -netns -family -f -rc -l -loops")))
		if len(ops) < 2 {
			return false
		}
		obj, verb := ops[0], ops[1]
		switch {
		case prefixOf(obj, "link") && prefixOf(verb, "set"):
			for _, o := range ops[2:] {
				if o == "down" {
					return true
				}
			}
		case (prefixOf(obj, "address") || prefixOf(obj, "route")) && prefixOf(verb, "flush"):
			return true
		case prefixOf(obj, "route") && prefixOf(verb, "delete"):
			return len(ops) > 2 && (ops[2] == "default" || ops[2] == "0.0.0.0/0")
		}
	case "ifdown":
		return true
	case "ifconfig":
		for _, a := range args {
			if a == "down" {
				return true
			}
		}
	case "nmcli":
		_, ops := opts(skipOpts(args, set("-f -g -e -c -m -w --fields --get-values --escape --colors --mode --wait")))
		if len(ops) < 2 {
			return false
		}
		obj, verb := ops[0], ops[1]
		switch {
		case prefixOf(obj, "networking") && verb == "off":
			return true
		case prefixOf(obj, "connection") && prefixOf(verb, "down"):
			return true
		case prefixOf(obj, "device") && (prefixOf(verb, "disconnect") || prefixOf(verb, "down")):
			return true
		}
	case "systemctl":
		verb, units := systemctlCall(args)
		switch verb {
		case "stop", "kill", "disable", "mask":
			for _, u := range units {
				if networkUnit.MatchString(u) {
					return true
				}
			}
		}
	case "service":
		_, ops := opts(args)
		return len(ops) >= 2 && networkUnit.MatchString(ops[0]) && ops[1] == "stop"
	}
	return false
}

var (
	funcDef      = regexp.MustCompile("(?:^|[\\s;&|(){}'\"`])([A-Za-z_:.][A-Za-z0-9_:.-]*)\\s*\\(\\s*\\)\\s*\\{([^}]*)\\}")
	funcKeyword  = regexp.MustCompile(`\bfunction\s+([A-Za-z_:.][A-Za-z0-9_:.-]*)\s*(?:\(\))?\s*\{([^}]*)\}`)
	forkLoops    = regexp.MustCompile(`(?i)fork\s*(\(\s*\))?\s*while\s*fork|for\s*\(\s*;\s*;\s*\)\s*\{?\s*fork|while\s*\(?\s*(1|true)\s*\)?\s*\{?\s*(os\.)?fork`)
	shadowRoot   = regexp.MustCompile(`(^|[^a-z0-9_-])root::`)
	dbusPowerReq = regexp.MustCompile(`(?i)(login1|systemd1)[ .,/]*(Manager)?[ .,/]*(Reboot|PowerOff|Halt|KExec|SoftReboot)\b`)
)

// isForkBomb finds a function that calls itself twice with a pipe or a
// background job, such as :(){ :|:& };:, and the common one-liner loops of
// other languages.
func isForkBomb(cmd string) bool {
	if strings.Contains(strings.ToLower(cmd), "fork") && forkLoops.MatchString(cmd) {
		return true
	}
	if !strings.Contains(cmd, "{") || !strings.Contains(cmd, "}") {
		return false
	}
	if strings.Contains(cmd, "(") {
		for _, m := range funcDef.FindAllStringSubmatch(cmd, -1) {
			if selfForking(m[1], m[2]) {
				return true
			}
		}
	}
	if !strings.Contains(cmd, "function") {
		return false
	}
	for _, m := range funcKeyword.FindAllStringSubmatch(cmd, -1) {
		if selfForking(m[1], m[2]) {
			return true
		}
	}
	return false
}

func selfForking(name, body string) bool {
	if len(body) > 400 || !strings.ContainsAny(body, "|&") {
		return false
	}
	calls := 0
	for _, tok := range strings.FieldsFunc(body, func(r rune) bool { return strings.ContainsRune("|&;(){}<> \t\n\r", r) }) {
		if tok == name {
			calls++
		}
	}
	return calls >= 2
}

func dbusPower(cmd string) bool {
	return (strings.Contains(cmd, "dbus") || strings.Contains(cmd, "busctl") || strings.Contains(cmd, "gdbus")) && dbusPowerReq.MatchString(cmd)
}
