package rules

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/nightshift-dev/nightshift/safety"

	"github.com/nightshift-dev/nightshift"
)

// Rule is one compliance rule. A Rule returned by a Set is a copy; changing
// it does not change the Set.
type Rule struct {
	// ID is the rule's unique identifier, matching [a-z0-9_.-]+.
	ID string
	// Title and Description are human-readable; both may be empty.
	Title       string
	Description string
	// Check decides whether the host complies. Rules loaded from YAML have a
	// ShellCheck. A zero Rule has none and Evaluate reports ErrNoCheck.
	Check Check
	// Banned are extra regular expressions (Go RE2 syntax) added to the
	// global ban list while this rule is worked on. They are validated when
	// the rule is loaded.
	Banned []string
	// Hints is free text given to the model.
	Hints string
	// MaxAttempts bounds the worker's attempts; 0 means the worker's default.
	MaxAttempts int
	// Paths are the files and directory trees the rule's fix may change
	// (its scope). With the recording sandbox every rule is judged
	// default-deny (safety.EffectsPolicy.StrictScope): a command that
	// changes anything outside Paths but scratch places (/tmp, /var/tmp,
	// /var/cache, /dev/shm) and the package manager's own writes is
	// refused, and an empty Paths allows no such change. A path whose
	// components after the first hold a path.Match pattern covers every
	// path they match (/home/*/.*: every home's dotfiles;
	// safety.ValidScopePath).
	Paths []string
	// ScopeNote says why Paths is empty, for the refusals of a change
	// outside it (safety.EffectsPolicy.ScopeNote): NoPathsNote for a YAML
	// rule without paths:, package scap's note for a rule without an OVAL
	// check. Empty: the rule's check reads no files.
	ScopeNote string
	// Units, Sysctl and Keys are what the rule's check reads besides files
	// (YAML units, sysctl and keys; for SCAP rules, derived from the OVAL
	// check): the systemd units it names, the kernel parameters, and the
	// configuration keywords its patterns match. They
	// scope the recorded actions (unit verbs only on Units and sshd's
	// reload, sysctl only for Sysctl) and the lines a command may change in
	// sshd's configuration and the sysctl files of Paths
	// (safety.EffectsPolicy.Units, Sysctl, Keys).
	Units  []string
	Sysctl []string
	Keys   []string
	// NoRecipes turns off replay of proven fixes for this rule (YAML
	// `recipes: false`): the model is always asked, as with --no-recipes.
	NoRecipes bool
	// Pos is where the rule is defined.
	Pos Position
}

// NoPathsNote is the ScopeNote of a YAML rule without paths: what a
// refusal of its changes tells its author to do.
const NoPathsNote = "declares no paths (add paths: to the rule)"

// Undeclared reports whether the rule declares no paths (a YAML rule
// without paths:, ScopeNote NoPathsNote): every change its fix makes
// outside scratch is refused, so a caller warns about it when it loads it.
func (r Rule) Undeclared() bool { return r.ScopeNote == NoPathsNote }

// Position is a place in a rule file. Line is 1-based; 0 when unknown.
type Position struct {
	File string
	Line int
}

// String formats the position as "file:line".
func (p Position) String() string {
	if p.Line <= 0 {
		return p.File
	}
	return p.File + ":" + strconv.Itoa(p.Line)
}

// Evaluate runs the rule's check on the target through r. See
// ShellCheck.Evaluate for the meaning of the result and of the error.
func (r Rule) Evaluate(ctx context.Context, run nightshift.Runner) (CheckResult, error) {
	if r.Check == nil {
		return CheckResult{Status: nightshift.CheckError, ExitCode: -1, Detail: "rule " + r.ID + " has no check"}, ErrNoCheck
	}
	return r.Check.Evaluate(ctx, run)
}

// BanList returns base extended with the rule's Banned patterns. A nil base
// means safety.DefaultBanList.
func (r Rule) BanList(base *safety.BanList) (*safety.BanList, error) {
	return base.With(r.Banned...)
}

func (r Rule) clone() Rule {
	r.Banned = slices.Clone(r.Banned)
	r.Paths = slices.Clone(r.Paths)
	return r
}

// Set is an immutable collection of rules with unique ids, in the order
// they were defined (files in name order, rules in file order). It is safe
// for concurrent use.
type Set struct {
	rules []Rule
	index map[string]int
}

// NewSet returns a Set of the given rules in the given order, for rules
// built in code rather than loaded from YAML (package scap's datastream
// rules). The rules are copied. Two rules with the same ID are an error
// matching ErrDuplicateID; the rules are not otherwise validated.
func NewSet(rules ...Rule) (*Set, error) {
	seen := make(map[string]bool, len(rules))
	out := make([]Rule, len(rules))
	for i, r := range rules {
		if seen[r.ID] {
			return nil, fmt.Errorf("rules: new set: rule %q: %w", r.ID, ErrDuplicateID)
		}
		seen[r.ID] = true
		out[i] = r.clone()
	}
	return newSet(out), nil
}

func newSet(rules []Rule) *Set {
	s := &Set{rules: rules, index: make(map[string]int, len(rules))}
	for i, r := range rules {
		s.index[r.ID] = i
	}
	return s
}

// Get returns the rule with the given id.
func (s *Set) Get(id string) (Rule, bool) {
	if s == nil {
		return Rule{}, false
	}
	i, ok := s.index[id]
	if !ok {
		return Rule{}, false
	}
	return s.rules[i].clone(), true
}

// IDs returns the rule ids in definition order.
func (s *Set) IDs() []string {
	if s == nil {
		return nil
	}
	ids := make([]string, len(s.rules))
	for i, r := range s.rules {
		ids[i] = r.ID
	}
	return ids
}

// Rules returns copies of the rules in definition order.
func (s *Set) Rules() []Rule {
	if s == nil {
		return nil
	}
	out := make([]Rule, len(s.rules))
	for i, r := range s.rules {
		out[i] = r.clone()
	}
	return out
}

// Len returns the number of rules.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.rules)
}
