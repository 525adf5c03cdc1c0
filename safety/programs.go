package safety

import (
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift/shell"
)

// verdict is what a check found: the entry, a hint for the model, and
// whether it rests on something not known before running.
type verdict struct {
	id      entryID
	hint    string
	unknown bool
}

// hit is a verdict the text determines; maybe one that rests on a value
// known only when the command runs.
func hit(id entryID, hint string) (verdict, bool) { return verdict{id: id, hint: hint}, true }
func maybe(id entryID, hint string) (verdict, bool) {
	return verdict{id: id, hint: hint, unknown: true}, true
}

// certain reports whether the verdict is certain: not resting on an
// unknown value, and not of an entry whose harm lies in code or commands
// the check does not read (inline code, deferred commands, what cannot
// be analysed).
func (v verdict) certain() bool {
	switch v.id {
	case entInterpreter, entDeferred, entUnanalysable:
		return false
	default:
		return !v.unknown
	}
}

// progName normalises a program's base name: python3.11 -> python3 stays a
// python, mkfs.ext4 keeps its name (callers test prefixes).
func progName(c *shell.Command) string { return c.Name() }

// optsOf returns program's options from package shell's one table of
// them (shell.ProgramOptions); a program the table lacks has none.
func optsOf(program string) shell.Options {
	o, _ := shell.ProgramOptions(program)
	return o
}

func isRecursive(opts []shell.Option) bool {
	_, ok := shell.Has(opts, "-r", "-R", "--recursive")
	return ok
}

// deletes: rm -r, mv, rsync --delete, find -delete / -exec rm.
func deletes(c *shell.Command) (verdict, bool) {
	switch progName(c) {
	case "rm":
		opts, ops, _ := optsOf("rm").Parse(c.Args[1:])
		if !isRecursive(opts) {
			return verdict{}, false
		}
		for _, o := range ops {
			h, unknown := pathHit(o, c.Dir, deleteProtected)
			if h {
				return hit(entDelete, "delete only the files the rule names")
			}
			if unknown {
				return maybe(entDelete, "write the path to delete literally (no variables, command substitutions or unknown working directory)")
			}
		}
	case "mv":
		opts, ops, _ := optsOf("mv").Parse(c.Args[1:])
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
			if h, unknown := pathHit(ops[len(ops)-1], c.Dir, deleteProtected); h {
				return hit(entDelete, "do not sync with --delete into system directories")
			} else if unknown {
				return maybe(entDelete, "do not sync with --delete into system directories")
			}
		}
	case "find":
		if h, unknown := findDeletes(c); h {
			return verdict{id: entDelete, hint: "delete only the files the rule names, without find -delete on system trees", unknown: unknown}, true
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
	for len(args) > 0 && !strings.HasPrefix(args[0].Value, "-") && args[0].Value != "(" && args[0].Value != "!" && (len(starts) == 0 || args[0].Kind != shell.Unknown) {
		// A word not known before running after the first start point
		// may be a primary (-delete): it is read as part of the
		// expression.
		starts = append(starts, args[0])
		args = args[1:]
	}
	if len(starts) == 0 {
		starts = []shell.Word{shell.Lit(".")}
	}
	return starts, args
}

// findDeletes reports whether find deletes under a protected start point
// something no selective test chose (h), and whether that rests on a value
// not known before running (unknown).
func findDeletes(c *shell.Command) (h, unknown bool) {
	starts, args := findStarts(c)
	boot := false
	for _, st := range starts {
		if w := shell.Abs(st, c.Dir); w.Kind == shell.Literal && (path.Clean(w.Value) == "/boot" || strings.HasPrefix(path.Clean(w.Value), "/boot/")) {
			boot = true // every kernel file matches a name pattern there
		}
	}
	for _, a := range args {
		switch a.Value {
		case "-o", "-or", ",", "!", "-not":
			// Alternatives and negations: no test is taken as selective
			// for a deletion (conservative).
			boot = true
		}
	}
	act := func(args []shell.Word, i int) (bool, bool) {
		switch args[i].Value {
		case "-delete":
			return true, false
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 < len(args) {
				if args[i+1].Kind != shell.Literal {
					return true, true
				}
				return destructiveExec[path.Base(args[i+1].Value)], false
			}
		}
		return false, false
	}
	sel := func(test string, arg shell.Word, negated bool) findSel {
		switch test {
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex":
			if boot || negated {
				return selNone
			}
			return nameSel(test, arg)
		case "-samefile", "-inum":
			if boot || negated {
				return selNone
			}
			if arg.Kind != shell.Literal {
				return selUnknown
			}
			return selYes
		}
		return selNone
	}
	acts, actUnknown := findScan(args, act, sel)
	if !acts {
		return false, false
	}
	sh, su := startsHit(c, starts)
	if !sh {
		return false, false
	}
	return true, su || actUnknown
}

// findSel is how selective a find test is: it matches nothing critical
// (selYes), it may match everything (selNone), or it depends on a value
// not known before running (selUnknown).
type findSel int

const (
	selNone findSel = iota
	selUnknown
	selYes
)

// nameSel judges a name, path or regex test: selective when its pattern
// matches none of the critical names (or, for paths and regexes, paths).
func nameSel(test string, arg shell.Word) findSel {
	if arg.Kind == shell.Unknown {
		return selUnknown
	}
	v := arg.Value
	switch test {
	case "-regex", "-iregex":
		expr := "^(?:" + v + ")$"
		if test == "-iregex" {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return selNone
		}
		for _, p := range criticalPaths {
			if re.MatchString(p) {
				return selNone
			}
		}
		return selYes
	case "-path", "-ipath", "-wholename", "-iwholename":
		if strings.Contains(v, "*/") || strings.HasPrefix(v, "*") || v == "/" {
			return selNone
		}
		for _, p := range criticalPaths {
			if globMatch(v, p) {
				return selNone
			}
		}
	}
	if matchesCritical(path.Base(v)) {
		return selNone
	}
	return selYes
}

// criticalPaths are full paths a find -regex or -path filter must not
// match for the find to count as selective.
var criticalPaths = strings.Fields(`/etc/passwd /etc/shadow /etc/ssh/sshd_config /etc/pam.d/sshd /etc/sudoers /usr/bin/sudo /usr/sbin/sshd
	/bin/bash /usr/lib/x86_64-linux-gnu/libc.so.6 /boot/vmlinuz /etc /usr /var/lib/dpkg /root/.ssh/authorized_keys /etc/fstab`)

// findArgTests are find's primaries that take one argument.
var findArgTests = map[string]bool{"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-perm": true, "-user": true, "-uid": true, "-group": true, "-gid": true, "-newer": true,
	"-anewer": true, "-cnewer": true, "-links": true, "-samefile": true, "-inum": true, "-size": true, "-type": true, "-xtype": true,
	"-mtime": true, "-mmin": true, "-atime": true, "-amin": true, "-ctime": true, "-cmin": true, "-used": true, "-maxdepth": true,
	"-mindepth": true, "-fstype": true, "-lname": true, "-ilname": true, "-context": true, "-printf": true, "-fprint": true,
	"-fprint0": true, "-fls": true, "-regextype": true, "-files0-from": true}

// findScan reads find's expression left to right, as find evaluates it,
// and reports whether an action (act) can run on a file no selective test
// (sel) before it in its branch chose: "-delete -name x" deletes
// everything before testing the name. unknown is set when that depends on
// a value not known before running (a test's argument, the program an
// -exec runs, or a word that could itself be an action).
func findScan(args []shell.Word, act func([]shell.Word, int) (bool, bool), sel func(string, shell.Word, bool) findSel) (hit, unknown bool) {
	type frame struct {
		open, all findSel
		neg       bool
	}
	stack := []frame{{open: selNone, all: selYes}}
	cur := selNone
	negNext := false
	minSel := func(a, b findSel) findSel {
		if a < b {
			return a
		}
		return b
	}
	maxSel := func(a, b findSel) findSel {
		if a > b {
			return a
		}
		return b
	}
	fire := func(actUnknown bool) {
		switch cur {
		case selNone:
			hit = true
			unknown = unknown || actUnknown
		case selUnknown:
			hit, unknown = true, true
		case selYes:
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		neg := negNext
		negNext = false
		switch {
		case v == "!" || v == "-not":
			negNext = !neg
			continue
		case v == "(":
			stack = append(stack, frame{open: cur, all: selYes, neg: neg})
			continue
		case v == ")":
			top := stack[len(stack)-1]
			top.all = minSel(top.all, cur)
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			if top.neg {
				cur = top.open
			} else {
				cur = maxSel(top.open, top.all)
			}
			continue
		case v == "-o" || v == "-or" || v == ",":
			top := &stack[len(stack)-1]
			top.all = minSel(top.all, cur)
			cur = top.open
			continue
		case v == "-a" || v == "-and":
			continue
		}
		if is, u := act(args, i); is {
			fire(u)
		}
		switch {
		case v == "-exec" || v == "-execdir" || v == "-ok" || v == "-okdir":
			for i++; i < len(args); i++ {
				if args[i].Value == ";" || args[i].Value == "+" && strings.Contains(args[i-1].Value, "{}") {
					break
				}
			}
		case findArgTests[v]:
			if i+1 < len(args) {
				cur = maxSel(cur, sel(v, args[i+1], neg))
				i++
			}
			if v == "-fprintf" {
				i++
			}
		case v == "-nouser" || v == "-nogroup":
			cur = maxSel(cur, sel(v, shell.Word{}, neg))
		case a.Kind == shell.Unknown:
			// A word not known before running where find expects a
			// primary: it may be -delete or -exec.
			fire(true)
		}
	}
	return hit, unknown
}

// startsHit reports whether a start point is protected (h) or may be
// (unknown, and no other start point is certainly protected).
func startsHit(c *shell.Command, starts []shell.Word) (h, unknown bool) {
	for _, s := range starts {
		hh, u := pathHit(s, c.Dir, deleteProtected)
		if hh {
			return true, false
		}
		unknown = unknown || u
	}
	return unknown, unknown
}

func recursivePerms(c *shell.Command) (verdict, bool) {
	name := progName(c)
	switch name {
	case "chmod", "chown", "chgrp", "chcon":
		opts, ops, _ := optsOf(name).Parse(c.Args[1:])
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
		if h, unknown := findPerms(c); h {
			return verdict{id: entPerms, hint: "change the permissions of the files the rule names; filter find by name, owner or mode", unknown: unknown}, true
		}
	case "setfacl":
		opts, ops, _ := optsOf("setfacl").Parse(c.Args[1:])
		if isRecursive(opts) {
			return permsTargets(c, ops)
		}
	}
	return verdict{}, false
}

// findPerms: find over a system tree running chmod, chown, chgrp, chattr
// or setfacl on what it finds is a recursive permission change, unless a
// selective name filter limits it.
func findPerms(c *shell.Command) (h, unknown bool) {
	if progName(c) != "find" {
		return false, false
	}
	starts, args := findStarts(c)
	act := func(args []shell.Word, i int) (bool, bool) {
		switch args[i].Value {
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 < len(args) {
				if args[i+1].Kind != shell.Literal {
					return true, true
				}
				switch path.Base(args[i+1].Value) {
				case "chmod", "chown", "chgrp", "chattr", "setfacl", "chcon":
					return true, false
				}
			}
		}
		return false, false
	}
	sel := func(test string, arg shell.Word, negated bool) findSel {
		switch test {
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex":
			if negated {
				return selNone
			}
			return nameSel(test, arg)
		case "-perm":
			if arg.Kind != shell.Literal {
				return selUnknown
			}
			if permMatchesAll(arg.Value) && !negated {
				return selNone
			}
			return selYes
		case "-links":
			if arg.Kind != shell.Literal {
				return selUnknown
			}
			if arg.Value == "+0" || strings.HasPrefix(arg.Value, "-") && arg.Value != "-1" && arg.Value != "-0" {
				return selNone
			}
			return selYes
		case "-user", "-uid", "-group", "-gid", "-newer", "-samefile", "-inum":
			// A filter on owner or age, negated too: "! -user root -exec
			// chown root" fixes exactly what it selects.
			if arg.Kind != shell.Literal {
				return selUnknown
			}
			return selYes
		case "-nouser", "-nogroup":
			return selYes
		}
		return selNone
	}
	acts, u := findScan(args, act, sel)
	if !acts || rootOwnsProgramDirs(starts, args, c.Dir) {
		return false, false
	}
	for _, s := range starts {
		// A start point known only when it runs is judged like chmod's
		// operand of an unknown file: allowed.
		if h, _ := pathHit(s, c.Dir, permsProtected); h {
			return true, u
		}
	}
	return false, false
}

// permMatchesAll reports whether find -perm MODE matches every file: a
// mode with no bits, in the -MODE (all of) or /MODE (any of, which GNU find
// makes match everything when MODE is 0) forms.
func permMatchesAll(mode string) bool {
	m := strings.TrimLeft(mode, "-/+")
	if m == mode {
		return false // exact mode: selective
	}
	if strings.Trim(m, "0") == "" {
		return true
	}
	// Symbolic modes with no permission letters ("u=", "a+").
	for _, part := range strings.Split(m, ",") {
		i := strings.IndexAny(part, "=+-")
		if i < 0 || strings.Trim(part[i+1:], "=+-") != "" {
			return false
		}
	}
	return true
}

func permsTargets(c *shell.Command, ops []shell.Word) (verdict, bool) {
	const hint = "change the permissions of the files the rule names, not of whole system trees"
	unknown := false
	for _, o := range ops {
		h, u := pathHit(o, c.Dir, permsProtected)
		if h {
			return hit(entPerms, hint)
		}
		unknown = unknown || u
	}
	if unknown {
		return maybe(entPerms, hint)
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
		name == "parted" && !listsOnly(args, "-l", "--list", "print"):
		return hit(entFormat, "do not format, partition or wipe disks")
	case name == "mkswap":
		if dev, unknown := anyDeviceOperand(c); dev {
			return verdict{id: entFormat, hint: "do not format, partition or wipe disks", unknown: unknown}, true
		}
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

func anyDeviceOperand(c *shell.Command) (dev, unknown bool) {
	for _, a := range c.Args[1:] {
		if strings.HasPrefix(a.Value, "-") {
			continue
		}
		w := shell.Abs(a, c.Dir)
		if strings.HasPrefix(path.Clean(w.Value), "/dev/") && w.Kind != shell.Unknown || w.Kind == shell.Pattern && strings.HasPrefix(w.Glob, "/dev") {
			return true, false
		}
		if w.Kind == shell.Unknown {
			unknown = true
		}
	}
	return unknown, unknown
}

// fileWrites returns the files a program writes through its operands.
// linksDevice: a symbolic link to a disk device (or /proc/sysrq-trigger,
// the shadow files) turns any later write to the link into a write to it.
func linksDevice(c *shell.Command) (verdict, bool) {
	if progName(c) != "ln" {
		return verdict{}, false
	}
	_, ops, _ := optsOf("ln").Parse(c.Args[1:])
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
			return maybe(entWriteDevice, "shred only files named literally")
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
		_, ops, _ := optsOf("tee").Parse(args)
		out = ops
	case "truncate", "shred":
		_, ops, _ := optsOf(progName(c)).Parse(args)
		out = ops
	case "cp", "install", "mv", "ln", "ddrescue", "pv", "socat":
		opts, ops, _ := optsOf("cp").Parse(args) // install, mv, ln, ddrescue, pv and socat write as cp does
		if t, ok := shell.Has(opts, "-t", "--target-directory"); ok {
			out = append(out, t)
			out = append(out, intoDir(t, ops)...)
		} else if len(ops) == 2 && progName(c) == "cp" && backupCopy(ops[0], ops[1], c.Dir) {
			// cp /etc/shadow /etc/shadow-: the backup gets the live file.
		} else if len(ops) > 1 {
			t := ops[len(ops)-1]
			out = append(out, t)
			switch n := progName(c); n {
			case "cp", "install":
				// The target may be a directory: each source lands in it
				// under its own name (cp ./shadow /etc/).
				out = append(out, intoDir(t, ops[:len(ops)-1])...)
			case "mv":
				// A rename writes no device; onto a password file it
				// replaces it.
				for _, w := range intoDir(t, ops[:len(ops)-1]) {
					if e, bad := writeBan(w, c.Dir, true); bad && e.id == entries[entPassword].id {
						out = append(out, w)
					}
				}
			}
		}
		if progName(c) == "ddrescue" && len(ops) > 1 {
			out = append(out, ops[1])
		}
	case "sed", "perl":
		if inPlace(progName(c), args) {
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
func inPlace(prog string, args []shell.Word) bool {
	// The options whose argument may follow in the same word: sed's (-e,
	// -f, -l); perl's -e, -E, -l, -m, -M, -I, -d, -D, -x, -C.
	sed := optsOf("sed")
	stops := sed.Args
	if prog == "perl" {
		stops = "efElmMIdDxC"
	}
	for _, a := range args {
		v := a.Value
		if strings.HasPrefix(v, "--") {
			if full, ok := sed.Resolve(v); ok && full == "--in-place" {
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
			if strings.ContainsRune(stops, c) {
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
			if p.Kind == shell.Literal && initOrAll(p.Value) && sig != "0" {
				return hit(entPower, "never signal PID 1 or every process")
			}
		}
	}
	return verdict{}, false
}

func globAny(glob string, names ...string) bool {
	for _, n := range names {
		if globMatch(glob, n) {
			return true
		}
	}
	return false
}

// systemctlVerb returns systemctl's verb and its operands.
func systemctlVerb(args []shell.Word) (string, []shell.Word) {
	_, ops, _ := optsOf("systemctl").Parse(args)
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

// initOrAll reports whether a kill operand names PID 1 or every process
// (-1) in any form kill programs accept: leading zeros, a sign, blanks
// around it, hexadecimal or octal (01, -01, +1, " 1", 0x1, -0x01).
func initOrAll(v string) bool {
	v = strings.TrimSpace(v)
	if len(v) > 1 && (v[0] == '-' || v[0] == '+') {
		v = v[1:]
	}
	for _, base := range []int{10, 0} {
		if n, err := strconv.ParseInt(v, base, 64); err == nil && n == 1 {
			return true
		}
	}
	return false
}

// backupCopy reports cp of a password file onto its own backup
// (/etc/shadow to /etc/shadow-), which writes what is already there.
func backupCopy(src, dst shell.Word, dir string) bool {
	s, d := shell.Abs(src, dir), shell.Abs(dst, dir)
	if s.Kind != shell.Literal || d.Kind != shell.Literal {
		return false
	}
	switch path.Clean(s.Value) {
	case "/etc/shadow", "/etc/gshadow", "/etc/passwd", "/etc/group":
		return path.Clean(d.Value) == path.Clean(s.Value)+"-"
	}
	return false
}

// programDirs are the trees of programs and libraries, whose directories
// root owns on every distribution.
var programTrees = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32",
	"/usr/lib64", "/usr/libexec", "/usr/local/bin", "/usr/local/sbin", "/usr/local/lib"}

// rootOwnsProgramDirs reports find over program and library trees giving
// directories (-type d before the action) to root with chown or chgrp
// (SSG's dir_ownership_binary_dirs): a directory keeps its mode on chown,
// and root owns these directories anyway.
func rootOwnsProgramDirs(starts, args []shell.Word, dir string) bool {
	for _, s := range starts {
		w := shell.Abs(s, dir)
		if w.Kind != shell.Literal {
			return false
		}
		p := path.Clean(w.Value)
		in := false
		for _, t := range programTrees {
			if p == t || strings.HasPrefix(p, t+"/") {
				in = true
			}
		}
		if !in {
			return false
		}
	}
	typeD, actions := false, 0
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-o" || v == "-or" || v == "," || v == "!" || v == "-not" || v == "(":
			return false
		case v == "-type" && i+1 < len(args):
			typeD = args[i+1].Value == "d"
			i++
		case v == "-exec" || v == "-execdir" || v == "-ok" || v == "-okdir":
			if !typeD || i+2 >= len(args) {
				return false
			}
			prog := path.Base(args[i+1].Value)
			j := i + 2
			for j < len(args) && strings.HasPrefix(args[j].Value, "-") && args[j].Kind == shell.Literal {
				if strings.Contains(args[j].Value, "R") || strings.HasPrefix(args[j].Value, "--rec") {
					return false // chown -R reaches the files, and clears their setuid bits
				}
				j++ // -L, -h, …
			}
			if j >= len(args) || args[j].Kind != shell.Literal || prog != "chown" && prog != "chgrp" {
				return false
			}
			switch args[j].Value {
			case "0", "root", "0:0", "root:root", "0:root", "root:0":
			default:
				return false
			}
			actions++
			i = j
			for i < len(args) && args[i].Value != ";" && args[i].Value != "+" {
				i++
			}
		case v == "-delete":
			return false
		}
	}
	return actions > 0
}

// intoDir returns the files sources copied into directory dir become:
// dir/base(source), for sources whose base name is known.
func intoDir(dir shell.Word, sources []shell.Word) []shell.Word {
	if dir.Kind == shell.Unknown {
		return nil
	}
	var out []shell.Word
	for _, s := range sources {
		if s.Kind != shell.Literal {
			continue
		}
		base := path.Base(s.Value)
		w := shell.Word{Kind: dir.Kind, Value: strings.TrimRight(dir.Value, "/") + "/" + base, Expanded: dir.Expanded}
		if dir.Kind == shell.Pattern {
			w.Glob = strings.TrimRight(dir.Glob, "/") + "/" + base
		}
		out = append(out, w)
	}
	return out
}
