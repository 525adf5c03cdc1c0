package safety

import (
	"path"
	"regexp"
	"strings"

	"github.com/nightshift-dev/nightshift/shell"
)

// verdict is what a check found: the entry, and a hint for the model.
type verdict struct {
	id   entryID
	hint string
}

var hit = func(id entryID, hint string) (verdict, bool) { return verdict{id, hint}, true }

// progName normalises a program's base name: python3.11 -> python3 stays a
// python, mkfs.ext4 keeps its name (callers test prefixes).
func progName(c *shell.Command) string { return c.Name() }

var (
	rmOpts    = shell.Options{Flags: "fiIrRdvx", Long: []string{"--force", "--interactive", "--one-file-system", "--no-preserve-root", "--preserve-root", "--recursive", "--dir", "--verbose", "--help", "--version"}, LongOpt: []string{"--interactive", "--preserve-root"}, Permute: true}
	mvOpts    = shell.Options{Flags: "bfinTuvZ", Args: "St", Long: []string{"--force", "--interactive", "--no-clobber", "--no-target-directory", "--update", "--verbose", "--strip-trailing-slashes", "--exchange", "--no-copy", "--context"}, LongArgs: []string{"--suffix", "--target-directory"}, LongOpt: []string{"--backup", "--update"}, Permute: true}
	cpOpts    = shell.Options{Flags: "abdfHilLnPpRrsTuvxZ", Args: "St", Long: []string{"--archive", "--attributes-only", "--copy-contents", "--force", "--interactive", "--link", "--dereference", "--no-clobber", "--no-dereference", "--parents", "--recursive", "--remove-destination", "--strip-trailing-slashes", "--symbolic-link", "--no-target-directory", "--one-file-system", "--verbose", "--debug"}, LongArgs: []string{"--suffix", "--target-directory", "--sparse", "--reflink"}, LongOpt: []string{"--backup", "--preserve", "--no-preserve", "--update", "--context", "--reflink"}, Permute: true}
	permsOpts = shell.Options{Flags: "cfvRHLPh", Long: []string{"--changes", "--silent", "--quiet", "--verbose", "--recursive", "--dereference", "--no-dereference", "--preserve-root", "--no-preserve-root"}, LongArgs: []string{"--reference", "--from"}, Permute: true}
)

func isRecursive(opts []shell.Option) bool {
	_, ok := shell.Has(opts, "-r", "-R", "--recursive")
	return ok
}

// deletes: rm -r, mv, rsync --delete, find -delete / -exec rm.
func deletes(c *shell.Command) (verdict, bool) {
	switch progName(c) {
	case "rm":
		opts, ops, _ := rmOpts.Parse(c.Args[1:])
		if !isRecursive(opts) {
			return verdict{}, false
		}
		for _, o := range ops {
			h, unknown := pathHit(o, c.Dir, deleteProtected)
			if h {
				return hit(entDelete, "delete only the files the rule names")
			}
			if unknown {
				return hit(entDelete, "write the path to delete literally (no variables, command substitutions or unknown working directory)")
			}
		}
	case "mv":
		opts, ops, _ := mvOpts.Parse(c.Args[1:])
		sources := ops
		if _, ok := shell.Has(opts, "-t", "--target-directory"); !ok && len(ops) > 0 {
			sources = ops[:len(ops)-1]
		}
		for _, o := range sources {
			if h, _ := pathHit(o, c.Dir, deleteProtected); h {
				return hit(entDelete, "move only the files the rule names")
			}
		}
	case "rsync":
		del := false
		var ops []shell.Word
		for _, a := range c.Args[1:] {
			if strings.HasPrefix(a.Value, "--del") || strings.HasPrefix(a.Value, "--remove-source") {
				del = true
			}
			if !strings.HasPrefix(a.Value, "-") {
				ops = append(ops, a)
			}
		}
		if del && len(ops) > 0 {
			if h, unknown := pathHit(ops[len(ops)-1], c.Dir, deleteProtected); h || unknown {
				return hit(entDelete, "do not sync with --delete into system directories")
			}
		}
	case "find":
		if findDeletes(c) {
			return hit(entDelete, "delete only the files the rule names, without find -delete on system trees")
		}
	}
	return verdict{}, false
}

var destructiveExec = map[string]bool{"rm": true, "shred": true, "unlink": true, "rmdir": true, "mv": true, "truncate": true, "dd": true, "wipefs": true}

// findStarts splits find's arguments into its starting points ("." when
// none) and its expression, after the options -H, -L, -P, -D and -O.
func findStarts(c *shell.Command) (starts, expr []shell.Word) {
	args := c.Args[1:]
	for len(args) > 0 && (args[0].Value == "-H" || args[0].Value == "-L" || args[0].Value == "-P" || strings.HasPrefix(args[0].Value, "-D") || strings.HasPrefix(args[0].Value, "-O")) {
		if (args[0].Value == "-D" || args[0].Value == "-O") && len(args) > 1 {
			args = args[1:] // -D debugopts
		}
		args = args[1:]
	}
	for len(args) > 0 && !strings.HasPrefix(args[0].Value, "-") && args[0].Value != "(" && args[0].Value != "!" {
		starts = append(starts, args[0])
		args = args[1:]
	}
	if len(starts) == 0 {
		starts = []shell.Word{shell.Lit(".")}
	}
	return starts, args
}

func findDeletes(c *shell.Command) bool {
	starts, args := findStarts(c)
	destructive, selective := false, false
	for i, a := range args {
		switch a.Value {
		case "-o", "-or", ",", "!", "-not":
			return findDestructive(args) && startsHit(c, starts)
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-samefile", "-inum":
			if i+1 < len(args) && args[i+1].Kind == shell.Literal {
				if v := args[i+1].Value; !matchesCritical(path.Base(v)) && !strings.Contains(v, "*/") {
					selective = true
				}
			}
		case "-delete":
			destructive = true
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 < len(args) {
				n := path.Base(args[i+1].Value)
				if destructiveExec[n] || args[i+1].Kind != shell.Literal {
					destructive = true
				}
			}
		}
	}
	if !destructive {
		return false
	}
	for _, st := range starts {
		if w := shell.Abs(st, c.Dir); w.Kind != shell.Literal || path.Clean(w.Value) == "/boot" || strings.HasPrefix(path.Clean(w.Value), "/boot/") {
			selective = false
		}
	}
	if selective {
		return false
	}
	return startsHit(c, starts)
}

// findDestructive: any -delete or -exec of a deleting program.
func findDestructive(args []shell.Word) bool {
	for i, a := range args {
		switch a.Value {
		case "-delete":
			return true
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 < len(args) && (destructiveExec[path.Base(args[i+1].Value)] || args[i+1].Kind != shell.Literal) {
				return true
			}
		}
	}
	return false
}

func startsHit(c *shell.Command, starts []shell.Word) bool {
	for _, s := range starts {
		if h, unknown := pathHit(s, c.Dir, deleteProtected); h || unknown {
			return true
		}
	}
	return false
}

func recursivePerms(c *shell.Command) (verdict, bool) {
	name := progName(c)
	switch name {
	case "chmod", "chown", "chgrp", "chcon":
		opts, ops, _ := permsOpts.Parse(c.Args[1:])
		if !isRecursive(opts) {
			return verdict{}, false
		}
		if _, ref := shell.Has(opts, "--reference"); !ref && len(ops) > 0 {
			ops = ops[1:] // the mode or owner
		}
		return permsTargets(c, ops)
	case "chattr":
		rec := false
		var ops []shell.Word
		for _, a := range c.Args[1:] {
			if strings.HasPrefix(a.Value, "-") && strings.Contains(a.Value, "R") && !strings.ContainsAny(a.Value[1:], "=+") {
				rec = true
				continue
			}
			if strings.HasPrefix(a.Value, "+") || strings.HasPrefix(a.Value, "-") || strings.HasPrefix(a.Value, "=") {
				continue
			}
			ops = append(ops, a)
		}
		if rec {
			return permsTargets(c, ops)
		}
	case "find":
		if findPerms(c) {
			return hit(entPerms, "change the permissions of the files the rule names; filter find by name, owner or mode")
		}
	case "setfacl":
		opts, ops, _ := shell.Options{Flags: "bkndRLPtv", Args: "mMxX", Long: []string{"--remove-all", "--remove-default", "--no-mask", "--default", "--recursive", "--logical", "--physical", "--test", "--mask"}, LongArgs: []string{"--modify", "--modify-file", "--remove", "--remove-file", "--set", "--set-file", "--restore"}, Permute: true}.Parse(c.Args[1:])
		if isRecursive(opts) {
			return permsTargets(c, ops)
		}
	}
	return verdict{}, false
}

// findPerms: find over a system tree running chmod, chown, chgrp, chattr
// or setfacl on what it finds is a recursive permission change, unless a
// selective name filter limits it.
func findPerms(c *shell.Command) bool {
	if progName(c) != "find" {
		return false
	}
	starts, args := findStarts(c)
	changes, selective := false, false
	for i, a := range args {
		switch a.Value {
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-samefile", "-inum", "-perm", "-user", "-uid",
			"-group", "-gid", "-regex", "-iregex", "-newer", "-links":
			// A filter on name, mode or owner (negated too: "! -user root
			// -exec chown root" fixes exactly what it selects).
			if i+1 < len(args) && !(a.Value == "-name" || a.Value == "-iname") || i+1 < len(args) && !matchesCritical(path.Base(args[i+1].Value)) {
				selective = true
			}
		case "-nouser", "-nogroup":
			selective = true
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 < len(args) {
				switch path.Base(args[i+1].Value) {
				case "chmod", "chown", "chgrp", "chattr", "setfacl", "chcon":
					changes = true
				}
				if args[i+1].Kind != shell.Literal {
					changes = true
				}
			}
		}
	}
	if !changes || selective {
		return false
	}
	for _, s := range starts {
		// A start point known only when it runs is judged like chmod's
		// operand of an unknown file: allowed.
		if h, _ := pathHit(s, c.Dir, permsProtected); h {
			return true
		}
	}
	return false
}

func permsTargets(c *shell.Command, ops []shell.Word) (verdict, bool) {
	for _, o := range ops {
		h, unknown := pathHit(o, c.Dir, permsProtected)
		if h || unknown {
			return hit(entPerms, "change the permissions of the files the rule names, not of whole system trees")
		}
	}
	return verdict{}, false
}

func formats(c *shell.Command) (verdict, bool) {
	name := progName(c)
	args := c.Args[1:]
	switch {
	case strings.HasPrefix(name, "mkfs") || strings.HasPrefix(name, "mke2fs") || strings.HasPrefix(name, "mkreiserfs") ||
		name == "mkdosfs" || name == "mkntfs" || name == "mkexfatfs" || name == "mke4fs" || name == "wipefs" || name == "blkdiscard" ||
		name == "pvcreate" || name == "pvremove" || name == "zpool" && anyOf(args, "destroy", "labelclear", "create") || name == "vgremove" || name == "lvremove" || name == "sg_format" || name == "sgdisk" && !listsOnly(args, "-p", "--print", "-v", "--verify", "-i", "--info") ||
		name == "gdisk" || name == "cfdisk" || name == "fdisk" && !listsOnly(args, "-l", "--list") ||
		name == "sfdisk" && !listsOnly(args, "-l", "--list", "-d", "--dump", "-J", "--json", "-s", "--show-size", "-V", "--verify") ||
		name == "parted" && !listsOnly(args, "-l", "--list", "print") || name == "mkswap" && anyDeviceOperand(c):
		return hit(entFormat, "do not format, partition or wipe disks")
	case name == "mdadm":
		for _, a := range args {
			if full, ok := shell.ResolveLong(a.Value, []string{"--zero-superblock", "--create", "--build"}); ok && strings.HasPrefix(a.Value, "--") || a.Value == "-C" || a.Value == "-B" {
				_ = full
				return hit(entFormat, "do not change RAID arrays")
			}
		}
	case name == "cryptsetup":
		for _, a := range args {
			switch a.Value {
			case "luksFormat", "erase", "luksErase", "reencrypt", "luksKillSlot":
				return hit(entFormat, "do not change encrypted volumes")
			}
		}
	case name == "nvme":
		for _, a := range args {
			if a.Value == "format" || a.Value == "sanitize" {
				return hit(entFormat, "do not format disks")
			}
		}
	case name == "hdparm":
		for _, a := range args {
			if strings.HasPrefix(a.Value, "--security-erase") || a.Value == "--trim-sector-ranges" || a.Value == "--write-sector" {
				return hit(entFormat, "do not erase disks")
			}
		}
	case name == "badblocks":
		for _, a := range args {
			if strings.HasPrefix(a.Value, "-") && strings.ContainsAny(a.Value, "wn") {
				return hit(entFormat, "do not write to disks")
			}
		}
	}
	return verdict{}, false
}

// listsOnly reports whether args contain one of the read-only forms.
func listsOnly(args []shell.Word, forms ...string) bool {
	for _, a := range args {
		for _, f := range forms {
			if a.Value == f {
				return true
			}
		}
	}
	return false
}

func anyDeviceOperand(c *shell.Command) bool {
	for _, a := range c.Args[1:] {
		if strings.HasPrefix(a.Value, "-") {
			continue
		}
		w := shell.Abs(a, c.Dir)
		if w.Kind == shell.Unknown || strings.HasPrefix(path.Clean(w.Value), "/dev/") || w.Kind == shell.Pattern && strings.HasPrefix(w.Glob, "/dev") {
			return true
		}
	}
	return false
}

// fileWrites returns the files a program writes through its operands.
// linksDevice: a symbolic link to a disk device (or /proc/sysrq-trigger,
// the shadow files) turns any later write to the link into a write to it.
func linksDevice(c *shell.Command) (verdict, bool) {
	if progName(c) != "ln" {
		return verdict{}, false
	}
	_, ops, _ := shell.Options{Flags: "bdfFiLnPrsTv", Args: "St", Long: []string{"--directory", "--force", "--interactive", "--logical", "--no-dereference", "--physical", "--relative", "--symbolic", "--no-target-directory", "--verbose"}, LongArgs: []string{"--suffix", "--target-directory"}, LongOpt: []string{"--backup"}, Permute: true}.Parse(c.Args[1:])
	for _, o := range ops {
		if e, bad := writeBan(o, c.Dir, true); bad {
			return hit(e.idOf(), "do not link to devices or the password files")
		}
	}
	return verdict{}, false
}

// shredsUnknown: shred of a file not known before running could be a disk.
func shredsUnknown(c *shell.Command) (verdict, bool) {
	if progName(c) != "shred" && progName(c) != "wipe" {
		return verdict{}, false
	}
	for _, a := range c.Args[1:] {
		if a.Kind == shell.Unknown {
			return hit(entWriteDevice, "shred only files named literally")
		}
	}
	return verdict{}, false
}

func fileWrites(c *shell.Command) []shell.Word {
	args := c.Args[1:]
	var out []shell.Word
	switch progName(c) {
	case "dd":
		for _, a := range args {
			if v, ok := strings.CutPrefix(a.Value, "of="); ok {
				out = append(out, shell.Word{Kind: a.Kind, Value: v, Glob: strings.TrimPrefix(a.Glob, "of=")})
			}
		}
	case "tee":
		_, ops, _ := shell.Options{Flags: "aip", Long: []string{"--append", "--ignore-interrupts"}, LongOpt: []string{"--output-error"}, Permute: true}.Parse(args)
		out = ops
	case "truncate", "shred":
		_, ops, _ := shell.Options{Flags: "cozuvxfn", Args: "rsn", Long: []string{"--no-create", "--io-blocks", "--force", "--remove", "--verbose", "--exact", "--zero"}, LongArgs: []string{"--reference", "--size", "--iterations", "--random-source"}, LongOpt: []string{"--remove"}, Permute: true}.Parse(args)
		out = ops
	case "cp", "install", "mv", "ln", "ddrescue", "pv", "socat":
		opts, ops, _ := cpOpts.Parse(args)
		if t, ok := shell.Has(opts, "-t", "--target-directory"); ok {
			out = append(out, t)
		} else if len(ops) > 1 {
			out = append(out, ops[len(ops)-1])
		}
		if progName(c) == "ddrescue" && len(ops) > 1 {
			out = append(out, ops[1])
		}
	case "sed", "perl":
		if inPlace(args) {
			for _, a := range args {
				if !strings.HasPrefix(a.Value, "-") {
					out = append(out, a)
				}
			}
		}
	case "awk", "gawk":
		for i, a := range args {
			if a.Value == "-i" && i+1 < len(args) && args[i+1].Value == "inplace" {
				out = append(out, args[i+2:]...)
			}
		}
	case "ed", "ex", "vipw", "vigr":
		for _, a := range args {
			if !strings.HasPrefix(a.Value, "-") {
				out = append(out, a)
			}
		}
	}
	return out
}

// inPlace reports whether sed or perl edits files in place (-i, -i.bak,
// -ni, --in-place, perl -pi).
func inPlace(args []shell.Word) bool {
	for _, a := range args {
		v := a.Value
		if strings.HasPrefix(v, "--") {
			if full, ok := shell.ResolveLong(v, []string{"--in-place", "--null-data", "--zero-terminated", "--line-length", "--posix", "--quiet",
				"--regexp-extended", "--separate", "--sandbox", "--silent", "--unbuffered", "--debug", "--expression", "--file", "--follow-symlinks"}); ok && full == "--in-place" {
				return true
			}
			continue
		}
		if !strings.HasPrefix(v, "-") {
			continue
		}
		for _, c := range v[1:] {
			if c == 'i' {
				return true
			}
			if strings.ContainsRune("efElmMIdDxC", c) {
				break
			}
		}
	}
	return false
}

var powerVerbs = map[string]bool{"reboot": true, "poweroff": true, "halt": true, "kexec": true, "soft-reboot": true, "rescue": true,
	"emergency": true, "isolate": true, "suspend": true, "hibernate": true, "hybrid-sleep": true, "suspend-then-hibernate": true, "exit": true, "switch-root": true}
var powerTargets = regexp.MustCompile(`^(reboot|poweroff|halt|kexec|rescue|emergency|soft-reboot|ctrl-alt-del|suspend|hibernate|sleep)\.target$`)

func powers(c *shell.Command) (verdict, bool) {
	name := progName(c)
	args := c.Args[1:]
	switch name {
	case "reboot", "poweroff", "halt", "kexec", "systemd-reboot", "killall5", "coreboot":
		return hit(entPower, "never take the host down; a service restart is enough")
	case "shutdown":
		if listsOnly(args, "-c", "--show") {
			return verdict{}, false
		}
		return hit(entPower, "never take the host down")
	case "init", "telinit":
		for _, a := range args {
			switch a.Value {
			case "0", "1", "6", "s", "S", "single", "emergency", "rescue":
				return hit(entPower, "never change the runlevel")
			}
		}
	case "systemctl", "loginctl":
		verb, ops := systemctlVerb(args)
		if powerVerbs[verb] {
			return hit(entPower, "never take the host down")
		}
		if verb == "start" || verb == "restart" || verb == "reload-or-restart" || verb == "try-restart" {
			for _, o := range ops {
				if powerTargets.MatchString(o.Value) || o.Kind == shell.Pattern && globAny(o.Glob, "reboot.target", "poweroff.target", "rescue.target") {
					return hit(entPower, "never take the host down")
				}
			}
		}
	case "dbus-send", "gdbus", "busctl", "qdbus":
		joined := strings.ToLower(c.String())
		if strings.Contains(joined, "login1") || strings.Contains(joined, "systemd1") {
			for _, m := range []string{"reboot", "poweroff", "halt", "kexec", "suspend", "hibernate"} {
				if strings.Contains(joined, m) {
					return hit(entPower, "never take the host down")
				}
			}
		}
	case "kill":
		sig, pids := killArgs(args)
		for _, p := range pids {
			if p.Kind == shell.Literal && (p.Value == "1" || p.Value == "-1") && sig != "0" {
				return hit(entPower, "never signal PID 1 or every process")
			}
		}
	}
	return verdict{}, false
}

func globAny(glob string, names ...string) bool {
	for _, n := range names {
		if ok, _ := path.Match(glob, n); ok {
			return true
		}
	}
	return false
}

var systemctlOpts = shell.Options{Flags: "alqfhrt", Args: "tpsnoHMP", Long: []string{"--all", "--recursive", "--reverse", "--after", "--before",
	"--failed", "--full", "--value", "--show-types", "--job-mode", "--fail", "--ignore-inhibitors", "--dry-run", "--quiet", "--no-warn", "--wait",
	"--no-block", "--user", "--system", "--global", "--no-wall", "--no-reload", "--no-ask-password", "--force", "--now", "--runtime",
	"--no-pager", "--no-legend", "--plain", "--firmware-setup", "--read-only", "--mkdir", "--marked", "--check-inhibitors"},
	LongArgs: []string{"--type", "--state", "--property", "--signal", "--kill-whom", "--kill-value", "--what", "--host", "--machine",
		"--output", "--lines", "--root", "--image", "--preset-mode", "--message", "--timestamp", "--boot-loader-menu", "--boot-loader-entry",
		"--reboot-argument", "--drop-in", "--when", "--job-mode", "--legend"}, Permute: true}

// systemctlVerb returns systemctl's verb and its operands.
func systemctlVerb(args []shell.Word) (string, []shell.Word) {
	_, ops, _ := systemctlOpts.Parse(args)
	if len(ops) == 0 {
		return "", nil
	}
	return ops[0].Value, ops[1:]
}

// killArgs returns the signal kill sends ("" for TERM) and its operands.
func killArgs(args []shell.Word) (string, []shell.Word) {
	sig := ""
	var pids []shell.Word
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--":
			pids = append(pids, args[i+1:]...)
			return sig, pids
		case v == "-s" || v == "-n" || v == "--signal":
			if i+1 < len(args) {
				sig = normSignal(args[i+1].Value)
				i++
			}
		case v == "-l" || v == "-L" || v == "--list" || v == "--table":
			return "0", nil
		case strings.HasPrefix(v, "-") && len(v) > 1 && args[i].Kind == shell.Literal && len(pids) == 0 && !isNumber(v[1:]) || strings.HasPrefix(v, "-") && len(pids) == 0 && sig == "" && isNumber(v[1:]) && i+1 < len(args):
			sig = normSignal(v[1:])
		default:
			pids = append(pids, args[i])
		}
	}
	return sig, pids
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// normSignal: "SIGHUP", "HUP", "hup", "1" -> "HUP"; "0" stays "0".
func normSignal(s string) string {
	s = strings.ToUpper(strings.TrimPrefix(strings.ToUpper(s), "SIG"))
	switch s {
	case "1":
		return "HUP"
	case "10":
		return "USR1"
	}
	return s
}

// harmlessSignal: reloads and probes.
func harmlessSignal(sig string) bool {
	switch sig {
	case "0", "HUP", "USR1", "USR2", "WINCH", "CONT":
		return true
	}
	return false
}

func anyOf(args []shell.Word, names ...string) bool {
	for _, a := range args {
		for _, n := range names {
			if a.Value == n {
				return true
			}
		}
	}
	return false
}
