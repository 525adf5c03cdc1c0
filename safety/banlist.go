package safety

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/nightshift-dev/nightshift/shell"
)

// Ban describes why a command was refused.
type Ban struct {
	// Entry names the ban-table entry that matched: "delete-system",
	// "unanalysable", "pattern", … (see Entries).
	Entry string
	// Pattern describes what the entry covers (built-in bans) or is the
	// regular expression of an added pattern.
	Pattern string
	// Reason says what the command would have done, or why it cannot be
	// checked.
	Reason string
	// Construct is the part of the command that matched: a simple command
	// in normal form (quotes removed, braces expanded, wrappers peeled) or
	// the construct that could not be analysed.
	Construct string
	// Hint, when set, tells the model what to write instead.
	Hint string
	// Certain is set when the text alone determines the banned effect:
	// every word the verdict rests on was known before running (rm -rf
	// /etc, kill -9 1, x=/dev/sda; dd of=$x, an added pattern). It is
	// unset when the command was refused because something it depends on
	// cannot be known from the text: the unanalysable entry (a program
	// name from an expansion, eval of non-literal text, text bash and the
	// parser could read differently, …), a value known only when it runs
	// where it could name a protected path, a unit, a PID or a password
	// (rm -rf "$dir", systemctl stop "$unit", kill "$pid", usermod -p
	// "$p"), code a program interprets (python -c, awk system(), sed's e,
	// an in-place edit of the password files whose result depends on the
	// script), and commands deferred past the check (at, tmux, a cron or
	// unit file whose content is not known). A caller with an effect-level
	// check (a sandbox that runs the command and judges what it did) may
	// send an uncertain refusal there instead; a caller without one must
	// refuse it. See the package documentation.
	Certain bool
}

// String formats the ban as one line: "REASON (ENTRY): CONSTRUCT; HINT".
func (b Ban) String() string {
	s := b.Reason + " (" + b.Entry + ")"
	if b.Construct != "" {
		s += ": " + b.Construct
	}
	if b.Hint != "" {
		s += "; " + b.Hint
	}
	return s
}

// MaxPatternLen bounds one added ban pattern, in bytes.
const MaxPatternLen = 1024

type pattern struct {
	src string
	re  *regexp.Regexp
}

// BanList decides which commands are never run: the built-in table (see
// Entries) plus added regular expressions. The built-in bans are part of
// every BanList, including the zero value and a nil *BanList; patterns can
// be added, never removed. A BanList is immutable and safe for concurrent
// use.
type BanList struct {
	extra []pattern
	cfg   shell.Config
}

// DefaultBanList returns the built-in bans alone.
func DefaultBanList() *BanList { return &BanList{} }

// NewBanList returns the built-in bans plus the given regular expressions
// (Go RE2 syntax, unanchored). An invalid pattern, or one that matches
// every command, is a *PatternError matching ErrBadPattern.
func NewBanList(patterns []string) (*BanList, error) { return DefaultBanList().With(patterns...) }

// With returns a new BanList with b's bans and the given patterns; b is
// unchanged. A nil b means DefaultBanList.
func (b *BanList) With(patterns ...string) (*BanList, error) {
	out := &BanList{}
	if b != nil {
		out.extra = append(out.extra, b.extra...)
		out.cfg = b.cfg
	}
	for i, p := range patterns {
		re, err := regexp.Compile(p)
		switch {
		case err != nil:
			err = fmt.Errorf("invalid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		case strings.TrimSpace(p) == "":
			err = fmt.Errorf("empty pattern would ban every command")
		case len(p) > MaxPatternLen:
			err = fmt.Errorf("pattern longer than %d bytes", MaxPatternLen)
		case re.MatchString(""):
			err = fmt.Errorf("pattern %q matches the empty string and would ban every command", p)
		}
		if err != nil {
			return nil, &PatternError{Index: i, Pattern: p, Err: err}
		}
		out.extra = append(out.extra, pattern{src: p, re: re})
	}
	return out, nil
}

// CheckPattern reports whether p is a valid added ban pattern.
func CheckPattern(p string) error {
	_, err := DefaultBanList().With(p)
	if err != nil {
		var pe *PatternError
		if ok := asPatternError(err, &pe); ok {
			return pe.Err
		}
	}
	return err
}

func asPatternError(err error, target **PatternError) bool {
	pe, ok := err.(*PatternError)
	if ok {
		*target = pe
	}
	return ok
}

// Patterns describes every ban, built-in ones first, one line each, for
// prompts and documentation.
func (b *BanList) Patterns() []string {
	var out []string
	for i := range entries[:entPattern] {
		out = append(out, briefs[i])
	}
	out = append(out, b.Added()...)
	return out
}

// Added describes the added patterns alone, one line each.
func (b *BanList) Added() []string {
	if b == nil {
		return nil
	}
	var out []string
	for _, p := range b.extra {
		out = append(out, fmt.Sprintf("commands matching the regular expression %q", p.src))
	}
	return out
}

// Check returns a *BannedError (matching ErrBanned) when command is banned,
// nil otherwise.
func (b *BanList) Check(command string) error {
	if ban, banned := b.Match(command); banned {
		return &BannedError{Command: command, Ban: ban}
	}
	return nil
}

type check func(*shell.Command) (verdict, bool)

var checks = []check{deletes, recursivePerms, formats, shredsUnknown, linksDevice, powers, firewall, password, sshAccess, network, inlineCode, deferred, unknownWords, allEntries}

// Match reports whether command is banned and why. See the package
// documentation for what it guarantees.
//
// When the command holds both, a certain refusal is reported before an
// uncertain one (Ban.Certain), so that a construct the analysis cannot
// resolve never hides a banned command it can.
func (b *BanList) Match(command string) (Ban, bool) {
	var cfg shell.Config
	if b != nil {
		cfg = b.cfg
	}
	an := shell.Analyze(command, cfg)
	var first Ban
	found := false
	// note keeps the first uncertain ban and reports whether ban ends the
	// search (it is certain).
	note := func(ban Ban) bool {
		if ban.Certain {
			return true
		}
		if !found {
			first, found = ban, true
		}
		return false
	}
	if len(an.Problems) > 0 {
		p := an.Problems[0]
		e := entries[entUnanalysable]
		note(Ban{Entry: e.id, Pattern: e.covers, Reason: e.reason + ": " + p.Reason, Construct: p.Construct, Hint: p.Hint})
	}
	for _, w := range an.Writes {
		if e, bad, unknown := writeBanU(w, "/", true); bad {
			ban := Ban{Entry: e.id, Pattern: e.covers, Reason: e.reason, Construct: "> " + w.Value, Hint: "never write to devices or the password files", Certain: !unknown}
			if note(ban) {
				return ban, true
			}
		}
	}
	if name, ok := forkBomb(an); ok {
		e := entries[entForkBomb]
		return Ban{Entry: e.id, Pattern: e.covers, Reason: e.reason, Construct: name, Certain: true}, true
	}
	links := map[string]string{}
	for _, c := range an.Commands {
		c = throughLinks(c, links)
		if ban, ok := judge(c); ok && note(ban) {
			return ban, true
		}
		if ban, ok := b.cronWrites(c); ok && note(ban) {
			return ban, true
		}
		if f, ok := runsWrittenFile(c, an); ok {
			e := entries[entUnanalysable]
			note(Ban{Entry: e.id, Pattern: e.covers, Reason: e.reason + ": the program or script " + f + " is written by the same command line",
				Construct: normalForms(c)[0], Hint: "run the commands directly instead of writing them to a file first"})
		}
	}
	if b == nil || len(b.extra) == 0 {
		return first, found
	}
	whole := strings.Join(strings.Fields(command), " ")
	for _, p := range b.extra {
		// Report the most specific form: wrappers come before what they
		// run, so the shortest match is the innermost.
		best := ""
		for _, c := range an.Commands {
			for _, form := range normalForms(c) {
				if (best == "" || len(form) < len(best)) && p.re.MatchString(form) {
					best = form
				}
			}
		}
		if best == "" && p.re.MatchString(whole) {
			best = whole
		}
		if best != "" {
			return patternBan(p, best), true
		}
	}
	return first, found
}

// MatchCertain reports whether command is certainly banned (Ban.Certain):
// the refusals Match makes that do not depend on anything unknown before
// running. A command it allows may still be refused by Match as uncertain.
func (b *BanList) MatchCertain(command string) (Ban, bool) {
	ban, banned := b.Match(command)
	if !banned || !ban.Certain {
		return Ban{}, false
	}
	return ban, true
}

func patternBan(p pattern, construct string) Ban {
	e := entries[entPattern]
	return Ban{Entry: e.id, Pattern: p.src, Reason: e.reason, Construct: construct, Certain: true}
}

// judge runs the table over one simple command.
func judge(c *shell.Command) (Ban, bool) {
	if len(c.Args) == 0 || c.Args[0].Kind != shell.Literal || c.Function {
		return Ban{}, false
	}
	var first Ban
	found := false
	for _, ch := range checks {
		if v, ok := ch(c); ok {
			e := entries[v.id]
			ban := Ban{Entry: e.id, Pattern: e.covers, Reason: e.reason, Construct: normalForms(c)[0], Hint: v.hint, Certain: v.certain()}
			if ban.Certain {
				return ban, true
			}
			if !found {
				first, found = ban, true
			}
		}
	}
	for _, w := range fileWrites(c) {
		if e, bad, unknown := writeBanU(w, c.Dir, true); bad {
			hint := "never write to devices"
			if e.id == entries[entPassword].id {
				hint = "change accounts with usermod, passwd or chage, not by editing the password files"
			}
			ban := Ban{Entry: e.id, Pattern: e.covers, Reason: e.reason, Construct: normalForms(c)[0], Hint: hint, Certain: !unknown && !(inPlaceEdit(c) && e.id == entries[entPassword].id)}
			if ban.Certain {
				return ban, true
			}
			if !found {
				first, found = ban, true
			}
		}
	}
	return first, found
}

// MatchArgv reports whether running the program argv directly, with no
// shell in between, is banned by the built-in table (wrappers in argv are
// peeled as in Match).
func (b *BanList) MatchArgv(argv []string) (Ban, bool) {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	return b.Match(strings.Join(quoted, " "))
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// normalForms: the command with quotes removed, braces expanded and the
// program's base name; the same without "--"; and its program with its
// operands only; simple bracket globs ([h]) replaced by their letter.
func normalForms(c *shell.Command) []string {
	if len(c.Args) == 0 {
		return nil
	}
	name := c.Name()
	if name == "" {
		name = c.Args[0].Value
	}
	all := []string{name}
	noDash := []string{name}
	ops := []string{name}
	for _, a := range c.Args[1:] {
		v := simpleGlob(a)
		all = append(all, v)
		if v == "--" {
			continue
		}
		noDash = append(noDash, v)
		if !strings.HasPrefix(v, "-") {
			ops = append(ops, v)
		}
	}
	return []string{strings.Join(all, " "), strings.Join(noDash, " "), strings.Join(ops, " ")}
}

var bracket1 = regexp.MustCompile(`\[(.)\]`)

func simpleGlob(w shell.Word) string {
	if w.Kind != shell.Pattern {
		return w.Value
	}
	return bracket1.ReplaceAllString(w.Value, "$1")
}

// forkBomb finds a function that calls itself in a pipe or in the
// background.
func forkBomb(an *shell.Analysis) (string, bool) {
	return an.SelfForking()
}

// scriptFiles returns the files a command runs as a program: the first
// operand of an interpreter, the -f file of awk, sed, nft, at and the
// iptables restore tools' input, crontab's file.
func scriptFiles(c *shell.Command) []shell.Word {
	args := c.Args[1:]
	name := c.Name()
	switch interpreterName(name) {
	case "python3", "python", "python2", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "php", "lua", "luajit", "tclsh", "wish", "expect", "Rscript":
		for _, a := range args {
			if !strings.HasPrefix(a.Value, "-") {
				return []shell.Word{a}
			}
		}
		return nil
	}
	var out []shell.Word
	switch name {
	case "awk", "gawk", "mawk", "nawk", "sed", "nft", "at", "gdb":
		for i, a := range args {
			if (a.Value == "-f" || a.Value == "--file" || a.Value == "-x" || a.Value == "--command") && i+1 < len(args) {
				out = append(out, args[i+1])
			} else if v, ok := strings.CutPrefix(a.Value, "--file="); ok {
				out = append(out, shell.Word{Kind: a.Kind, Value: v})
			}
		}
	case "crontab", "iptables-restore", "ip6tables-restore", "nft-restore":
		for _, a := range args {
			if !strings.HasPrefix(a.Value, "-") {
				out = append(out, a)
			}
		}
	}
	return out
}

// runsWrittenFile reports a program, or a script handed to an
// interpreter, that the same command line wrote with a redirection.
func runsWrittenFile(c *shell.Command, an *shell.Analysis) (string, bool) {
	if len(c.Args) == 0 || c.Function {
		return "", false
	}
	written := func(w shell.Word) bool {
		a := shell.Abs(w, c.Dir)
		return a.Kind == shell.Literal && an.WrittenHere(a.Value)
	}
	if written(c.Args[0]) {
		return c.Args[0].Value, true
	}
	for _, a := range scriptFiles(c) {
		if written(a) {
			return a.Value, true
		}
	}
	return "", false
}
