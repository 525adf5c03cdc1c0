package rules

import (
	"fmt"
	"regexp"
	"strings"
)

// Ban describes why a command was refused.
type Ban struct {
	// Pattern is the human-readable description of a built-in ban, or the
	// regular expression of an added one.
	Pattern string
	// Reason says what the command would have done.
	Reason string
	// Segment is the part of the command that matched: a simple command in
	// canonical form (quotes removed, wrappers peeled, program base name),
	// or the whole command with whitespace collapsed.
	Segment string
}

// BanList decides which commands are never run. The built-in bans (see
// DefaultBanList) are always part of every BanList, including the zero
// value and a nil *BanList; patterns can be added, never removed. A BanList
// is immutable and safe for concurrent use.
type BanList struct {
	extra []pattern
}

type pattern struct {
	src string
	re  *regexp.Regexp
}

// DefaultBanList returns the built-in bans alone.
func DefaultBanList() *BanList { return &BanList{} }

// NewBanList returns the built-in bans plus the given regular expressions
// (Go RE2 syntax, unanchored, matched against the whole command and
// against each simple command in canonical form). An invalid pattern is
// reported as a *PatternError matching ErrBadPattern.
func NewBanList(extra []string) (*BanList, error) {
	return DefaultBanList().With(extra...)
}

// With returns a new BanList with b's bans and the given patterns; b is
// unchanged. A nil b means DefaultBanList.
func (b *BanList) With(patterns ...string) (*BanList, error) {
	out := &BanList{}
	if b != nil {
		out.extra = append(out.extra, b.extra...)
	}
	for i, p := range patterns {
		if err := checkPattern(p); err != nil {
			return nil, &PatternError{Index: i, Pattern: p, Err: err}
		}
		out.extra = append(out.extra, pattern{src: p, re: regexp.MustCompile(p)})
	}
	return out, nil
}

// Patterns describes every ban, built-in ones first, one line each, for
// prompts and documentation.
func (b *BanList) Patterns() []string {
	var out []string
	for _, d := range builtins {
		out = append(out, d.pattern+" ("+d.reason+")")
	}
	if b != nil {
		for _, p := range b.extra {
			out = append(out, fmt.Sprintf("commands matching the regular expression %q", p.src))
		}
	}
	return out
}

// Match reports whether command is banned and why. It analyses the command
// as a POSIX shell would run it: the whole command and every simple command
// after splitting on ; && || | & and newlines, inside $( ), backquotes,
// process substitutions, subshells, functions and here-documents fed to a
// shell; after quote removal, ANSI-C $'..' decoding, expansion of variables
// assigned earlier in the command, and peeling of wrappers (sudo, doas, env,
// nohup, timeout, nice, ionice, stdbuf, setsid, chroot, xargs, flock,
// watch, busybox, command, exec, systemd-run, su -c, ssh HOST CMD, bash/sh
// -c, eval, interpreter -c/-e string literals, find -exec); with program
// paths reduced to their base names. A command too long (MaxCommandLen) or
// too deeply nested to analyse is banned.
//
// This is defence in depth against a confused model, not a sandbox: a
// determined adversary can hide a command from any such analysis (base64,
// scripts written to files, unknown variables), so the target must still
// be disposable or otherwise protected.
func (b *BanList) Match(command string) (Ban, bool) {
	if len(command) > MaxCommandLen {
		return Ban{Pattern: fmt.Sprintf("commands longer than %d KiB", MaxCommandLen>>10),
			Reason: "too long to check for banned commands"}, true
	}
	whole := strings.Join(strings.Fields(command), " ")
	a := analyze(command)
	if a.exceeded {
		return Ban{Pattern: "commands nested or expanded too deeply to analyse",
			Reason: "too complex to check for banned commands", Segment: whole}, true
	}
	if a.malformed {
		return Ban{Pattern: "commands with an unterminated quote or substitution",
			Reason: "cannot be checked reliably (the shell would reject it)", Segment: whole}, true
	}
	for _, script := range a.scripts {
		for _, r := range rawBuiltins {
			if r.match(script) {
				return Ban{Pattern: r.pattern, Reason: r.reason, Segment: strings.Join(strings.Fields(script), " ")}, true
			}
		}
	}
	for _, s := range a.out {
		for _, d := range builtins {
			if d.match(s) {
				return Ban{Pattern: d.pattern, Reason: d.reason, Segment: s.text}, true
			}
		}
	}
	if b == nil {
		return Ban{}, false
	}
	for _, p := range b.extra {
		// Report the most specific segment: wrappers are emitted before
		// what they wrap, so the shortest match is the innermost.
		best := ""
		for _, s := range a.out {
			if (best == "" || len(s.text) < len(best)) && p.re.MatchString(s.text) {
				best = s.text
			}
		}
		if best != "" {
			return Ban{Pattern: p.src, Reason: "matches an added ban pattern", Segment: best}, true
		}
		if p.re.MatchString(whole) {
			return Ban{Pattern: p.src, Reason: "matches an added ban pattern", Segment: whole}, true
		}
	}
	return Ban{}, false
}

// Check returns a *BannedError (matching ErrBanned) when command is banned,
// nil otherwise.
func (b *BanList) Check(command string) error {
	if ban, banned := b.Match(command); banned {
		return &BannedError{Command: command, Ban: ban}
	}
	return nil
}
