package sandbox

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// report is the helper's answer to try, parsed.
type report struct {
	sections map[string][]byte
}

// parseReport reads "NAME LENGTH\n" + LENGTH bytes + "\n" sections.
func parseReport(b []byte) (report, error) {
	r := report{sections: map[string][]byte{}}
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return r, fmt.Errorf("%w: section header without a newline", ErrReport)
		}
		name, size, ok := strings.Cut(string(b[:nl]), " ")
		n, err := strconv.Atoi(size)
		if !ok || err != nil || n < 0 || name == "" {
			return r, fmt.Errorf("%w: bad section header %q", ErrReport, clip(string(b[:nl]), 80))
		}
		b = b[nl+1:]
		if len(b) < n+1 || b[n] != '\n' {
			return r, fmt.Errorf("%w: section %s is cut (%d bytes announced, %d left)", ErrReport, name, n, len(b))
		}
		r.sections[name] = b[:n]
		b = b[n+1:]
	}
	for _, s := range []string{"exit", "mounts", "upper", "lower", "deleted", "actions"} {
		if _, ok := r.sections[s]; !ok {
			return r, fmt.Errorf("%w: no %s section", ErrReport, s)
		}
	}
	return r, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// fields splits a NUL-terminated list into records of n fields.
func fields(b []byte, n int, what string) ([][]string, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[len(b)-1] != 0 {
		return nil, fmt.Errorf("%w: %s does not end in NUL", ErrReport, what)
	}
	parts := strings.Split(string(b[:len(b)-1]), "\x00")
	if len(parts)%n != 0 {
		return nil, fmt.Errorf("%w: %s has %d fields, not a multiple of %d", ErrReport, what, len(parts), n)
	}
	var out [][]string
	for i := 0; i < len(parts); i += n {
		out = append(out, parts[i:i+n])
	}
	return out, nil
}

// mountPoints maps an overlay index to its mount point (KIND overlay, or
// run: /run over the copy of the host's taken at the start).
func (r report) mountPoints() map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimRight(string(r.sections["mounts"]), "\n"), "\n") {
		parts := strings.SplitN(line, " ", 3)
		if len(parts) == 3 && (parts[1] == "overlay" || parts[1] == "run") {
			m[parts[0]] = parts[2]
		}
	}
	return m
}

// statState parses "TYPE|mode|uid|gid|size" as stat -c '%F|%a|%u|%g|%s'
// prints it.
func statState(s, hash, target string) (nightshift.FileState, error) {
	p := strings.Split(s, "|")
	if len(p) != 5 {
		return nightshift.FileState{}, fmt.Errorf("%w: bad stat %q", ErrReport, clip(s, 80))
	}
	var st nightshift.FileState
	switch p[0] {
	case "regular file", "regular empty file":
		st.Kind = nightshift.FileRegular
	case "directory":
		st.Kind = nightshift.FileDir
	case "symbolic link":
		st.Kind = nightshift.FileSymlink
	case "character special file", "block special file":
		st.Kind = nightshift.FileDevice
	default:
		st.Kind = nightshift.FileOther
	}
	mode, err1 := strconv.ParseUint(p[1], 8, 32)
	uid, err2 := strconv.Atoi(p[2])
	gid, err3 := strconv.Atoi(p[3])
	size, err4 := strconv.ParseInt(p[4], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return st, fmt.Errorf("%w: bad stat %q", ErrReport, clip(s, 80))
	}
	st.Mode, st.UID, st.GID, st.Size = uint32(mode), uid, gid, size
	if st.Kind == nightshift.FileRegular && hash != "-" {
		st.SHA256 = hash
	}
	if st.Kind == nightshift.FileSymlink {
		st.Target = target
	}
	if st.Kind != nightshift.FileSymlink && st.Kind != nightshift.FileRegular {
		st.Size = 0 // a directory's size says nothing
	}
	return st, nil
}

// stateToken is the helper's hashof form of a state: "-" absent, "d"
// directory, "l:TARGET" symlink, the sha256 of a regular file, "o" else.
func stateToken(s nightshift.FileState) string {
	switch s.Kind {
	case nightshift.FileNone:
		return "-"
	case nightshift.FileDir:
		return "d"
	case nightshift.FileSymlink:
		return "l:" + s.Target
	case nightshift.FileRegular:
		return s.SHA256
	case nightshift.FileDevice, nightshift.FileOther:
		return "o"
	default:
		return "o"
	}
}

// tokenState is the inverse of stateToken, as far as it goes.
func tokenState(tok string) nightshift.FileState {
	switch {
	case tok == "-":
		return nightshift.FileState{}
	case tok == "d":
		return nightshift.FileState{Kind: nightshift.FileDir}
	case strings.HasPrefix(tok, "l:"):
		return nightshift.FileState{Kind: nightshift.FileSymlink, Target: tok[2:]}
	case tok == "o":
		return nightshift.FileState{Kind: nightshift.FileOther}
	default:
		return nightshift.FileState{Kind: nightshift.FileRegular, SHA256: tok}
	}
}

// op is one step of a commit, as the helper's commit reads it.
type op struct {
	Op, N, Rel, Expect, Meta string
}

// effects turns the listings into the command's effects and the commit's
// ops. Paths are joined to their mount points; directories whose mode and
// owner did not change (copied up as parents) are not effects.
func (r report) effects() (nightshift.Effects, []op, error) {
	mps := r.mountPoints()
	real := func(n, rel string) (string, error) {
		mp, ok := mps[n]
		if !ok {
			return "", fmt.Errorf("%w: overlay %q is not in the mounts", ErrReport, n)
		}
		return path.Join(mp, rel), nil
	}
	type key struct{ n, rel string }
	lower := map[key][]string{}
	lrecs, err := fields(r.sections["lower"], 6, "lower")
	if err != nil {
		return nightshift.Effects{}, nil, err
	}
	for _, l := range lrecs {
		lower[key{l[0], l[5]}] = l
	}
	diffs := map[key]string{}
	drecs, err := fields(r.sections["diffs"], 3, "diffs")
	if err != nil {
		return nightshift.Effects{}, nil, err
	}
	for _, d := range drecs {
		diffs[key{d[0], d[1]}] = d[2]
	}
	urecs, err := fields(r.sections["upper"], 5, "upper")
	if err != nil {
		return nightshift.Effects{}, nil, err
	}
	var eff nightshift.Effects
	var dels, rest []op
	deleted := map[key]bool{}
	addDelete := func(n, rel string, before nightshift.FileState, entries int) error {
		k := key{n, rel}
		if deleted[k] {
			return nil
		}
		deleted[k] = true
		p, err := real(n, rel)
		if err != nil {
			return err
		}
		eff.Changes = append(eff.Changes, nightshift.FileChange{Path: p, Change: nightshift.ChangeDeleted, Before: before, Entries: entries})
		dels = append(dels, op{"D", n, rel, stateToken(before), "-"})
		return nil
	}
	for _, u := range urecs {
		n, st, hash, target, rel := u[0], u[1], u[2], u[3], u[4]
		// "STAT MAJOR MINOR": the stat part has blanks of its own.
		statPart, rdev := st, ""
		if i := strings.LastIndexByte(st, ' '); i > 0 {
			if j := strings.LastIndexByte(st[:i], ' '); j > 0 {
				statPart, rdev = st[:j], st[j+1:]
			}
		}
		after, err := statState(statPart, hash, target)
		if err != nil {
			return eff, nil, err
		}
		l, hadLower := lower[key{n, rel}]
		var before nightshift.FileState
		entries := 0
		if hadLower {
			if before, err = statState(l[1], l[2], l[3]); err != nil {
				return eff, nil, err
			}
			entries, _ = strconv.Atoi(l[4])
		}
		// A whiteout: a character device 0:0 in the upper layer.
		if after.Kind == nightshift.FileDevice && rdev == "0 0" {
			if hadLower {
				if err := addDelete(n, rel, before, entries); err != nil {
					return eff, nil, err
				}
			}
			continue
		}
		p, err := real(n, rel)
		if err != nil {
			return eff, nil, err
		}
		meta := fmt.Sprintf("%o %d %d", after.Mode, after.UID, after.GID)
		c := nightshift.FileChange{Path: p, Before: before, After: after, Diff: diffs[key{n, rel}]}
		expect := stateToken(before)
		if hadLower && (before.Kind == nightshift.FileDir) != (after.Kind == nightshift.FileDir) {
			// The type changed between directory and not: delete, then
			// make anew.
			dels = append(dels, op{"D", n, rel, expect, "-"})
			expect = "*"
		}
		switch {
		case !hadLower:
			c.Change = nightshift.ChangeCreated
		case before.Kind != after.Kind || before.SHA256 != after.SHA256 || before.Target != after.Target:
			c.Change = nightshift.ChangeModified
		case before.Mode != after.Mode || before.UID != after.UID || before.GID != after.GID:
			c.Change = nightshift.ChangeMeta
		default:
			continue // copied up, unchanged
		}
		eff.Changes = append(eff.Changes, c)
		switch {
		case after.Kind == nightshift.FileDir && (expect == "-" || expect == "*"):
			rest = append(rest, op{"K", n, rel, expect, meta})
		case after.Kind == nightshift.FileDir:
			rest = append(rest, op{"A", n, rel, expect, meta})
		default:
			rest = append(rest, op{"W", n, rel, expect, "-"})
		}
	}
	xrecs, err := fields(r.sections["deleted"], 4, "deleted")
	if err != nil {
		return eff, nil, err
	}
	for _, d := range xrecs {
		entries, _ := strconv.Atoi(d[3])
		if err := addDelete(d[0], d[1], tokenState(d[2]), entries); err != nil {
			return eff, nil, err
		}
	}
	slices.SortStableFunc(dels, func(a, b op) int { return strings.Compare(a.Rel, b.Rel) })
	acts, err := parseActions(r.sections["actions"])
	if err != nil {
		return eff, nil, err
	}
	eff.Actions = acts
	eff.SSHD = r.sshd()
	if eff.Parses, err = parseChecks(r.sections["parse"]); err != nil {
		return eff, nil, err
	}
	eff.PAM = r.pam()
	eff.Origin = strings.TrimSpace(string(r.sections["origin"]))
	srecs, err := fields(r.sections["shadows"], 2, "shadows")
	if err != nil {
		return eff, nil, err
	}
	for _, s := range srecs {
		if eff.Shadows == nil {
			eff.Shadows = map[string]string{}
		}
		eff.Shadows[s[0]] = s[1]
	}
	slices.SortStableFunc(eff.Changes, func(a, b nightshift.FileChange) int { return strings.Compare(a.Path, b.Path) })
	return eff, append(dels, rest...), nil
}

// parseActions reads the recorder's log: COUNT\0 then COUNT arguments,
// each NUL-terminated. The sandboxed command can write that file too, so
// anything malformed ends the list with an error rather than a guess.
func parseActions(b []byte) ([]nightshift.RecordedAction, error) {
	var out []nightshift.RecordedAction
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return out, fmt.Errorf("%w: recorded actions end without NUL", ErrReport)
		}
		n, err := strconv.Atoi(string(b[:i]))
		if err != nil || n < 1 || n > 1<<16 {
			return out, fmt.Errorf("%w: recorded actions: bad count %q", ErrReport, clip(string(b[:i]), 40))
		}
		b = b[i+1:]
		argv := make([]string, 0, n)
		for range n {
			j := bytes.IndexByte(b, 0)
			if j < 0 {
				return out, fmt.Errorf("%w: recorded action cut short", ErrReport)
			}
			argv = append(argv, string(b[:j]))
			b = b[j+1:]
		}
		out = append(out, nightshift.RecordedAction{Argv: argv})
	}
	return out, nil
}

// exec is the command's result as the helper saw it.
func (r report) exec() (nightshift.Exec, error) {
	var ex nightshift.Exec
	code := strings.TrimSpace(string(r.sections["exit"]))
	switch {
	case code == "timeout":
		ex.TimedOut, ex.ExitCode = true, -1
	default:
		n, err := strconv.Atoi(code)
		if err != nil {
			return ex, fmt.Errorf("%w: bad exit %q", ErrReport, clip(code, 40))
		}
		ex.ExitCode = n
	}
	ex.Stdout = string(r.sections["stdout"])
	ex.Stderr = string(r.sections["stderr"])
	ex.StdoutCut, _ = strconv.ParseInt(strings.TrimSpace(string(r.sections["stdout_cut"])), 10, 64)
	ex.StderrCut, _ = strconv.ParseInt(strings.TrimSpace(string(r.sections["stderr_cut"])), 10, 64)
	return ex, nil
}

// sshd reads the sshd_t and sshd_T sections (nil when absent or empty).
func (r report) sshd() *nightshift.SSHDCheck {
	t := strings.TrimSpace(string(r.sections["sshd_t"]))
	if t == "" {
		return nil
	}
	c := &nightshift.SSHDCheck{Effective: map[string]string{}}
	out, status, _ := strings.Cut(t, "exit ")
	if i := strings.LastIndex(t, "exit "); i >= 0 {
		out, status = t[:i], t[i+len("exit "):]
	}
	c.TestOK = strings.TrimSpace(status) == "0"
	c.TestOutput = strings.TrimSpace(out)
	for _, line := range strings.Split(string(r.sections["sshd_T"]), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if k == "login" {
			c.Login = v
			continue
		}
		k = strings.ToLower(k)
		if old, dup := c.Effective[k]; dup {
			v = old + " " + v // repeated keywords (hostkey, …)
		}
		c.Effective[k] = v
	}
	return c
}

// pam reads the pam section (nil when absent or empty): "file VIEW PATH"
// followed by the file's lines each after "|", "module VIEW NAME 0|1",
// "login USER", "groups USER GROUP...".
func (r report) pam() *nightshift.PAMView {
	b := r.sections["pam"]
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	v := &nightshift.PAMView{Groups: map[string][]string{}}
	v.Before = nightshift.PAMState{Files: map[string]string{}, Modules: map[string]bool{}}
	v.After = nightshift.PAMState{Files: map[string]string{}, Modules: map[string]bool{}}
	state := func(view string) *nightshift.PAMState {
		switch view {
		case "before":
			return &v.Before
		case "after":
			return &v.After
		default:
			return nil
		}
	}
	var file *nightshift.PAMState
	var name string
	var body strings.Builder
	flush := func() {
		if file != nil {
			file.Files[name] = body.String()
		}
		file, name = nil, ""
		body.Reset()
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "|"); ok {
			if file != nil {
				body.WriteString(rest)
				body.WriteByte('\n')
			}
			continue
		}
		flush()
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "file" && state(f[1]) != nil:
			file, name = state(f[1]), strings.TrimPrefix(line, "file "+f[1]+" ")
		case len(f) == 4 && f[0] == "module" && state(f[1]) != nil:
			state(f[1]).Modules[f[2]] = f[3] == "1"
		case len(f) == 2 && f[0] == "login":
			v.Login = f[1]
		case len(f) >= 2 && f[0] == "groups":
			v.Groups[f[1]] = f[2:]
		}
	}
	flush()
	return v
}

// maxParses bounds the parse section's records (the helper writes one per
// program it knows, a handful).
const maxParses = 64

// parseChecks reads the parse section: records of six NUL-terminated
// fields, PROGRAM FILE BEFORE AFTER BEFORE_MESSAGE AFTER_MESSAGE, BEFORE
// "1" or "0", AFTER "1", "0" or "-" (not checked, AFTER_MESSAGE says
// why). Nil when the section is absent or empty.
func parseChecks(b []byte) ([]nightshift.ConfigParse, error) {
	recs, err := fields(b, 6, "parse")
	if err != nil {
		return nil, err
	}
	if len(recs) > maxParses {
		return nil, fmt.Errorf("%w: parse has %d records, more than %d", ErrReport, len(recs), maxParses)
	}
	var out []nightshift.ConfigParse
	for _, r := range recs {
		c := nightshift.ConfigParse{Program: r[0], File: r[1]}
		if c.Program == "" || !path.IsAbs(c.File) {
			return nil, fmt.Errorf("%w: parse record without a program or an absolute file (%q, %q)", ErrReport, clip(r[0], 40), clip(r[1], 80))
		}
		switch r[2] {
		case "1":
			c.BeforeOK = true
		case "0":
			c.BeforeMessage = parseMessage(r[4])
		default:
			return nil, fmt.Errorf("%w: parse record for %s: bad before %q", ErrReport, clip(r[0], 40), clip(r[2], 20))
		}
		switch r[3] {
		case "1":
			c.AfterOK = true
		case "0":
			c.Message = parseMessage(r[5])
		case "-":
			c.Skipped = parseMessage(r[5])
			if c.Skipped == "" {
				c.Skipped = "not checked"
			}
		default:
			return nil, fmt.Errorf("%w: parse record for %s: bad after %q", ErrReport, clip(r[0], 40), clip(r[3], 20))
		}
		out = append(out, c)
	}
	return out, nil
}

// maxParseMessage bounds a parser's message kept in the effects.
const maxParseMessage = 2000

// parseMessage is a parser's message as kept: cut, valid UTF-8.
func parseMessage(s string) string {
	return strings.ToValidUTF8(clip(s, maxParseMessage), "")
}
