package memory

import (
	"sort"
	"strings"

	"github.com/nightshift-dev/nightshift/internal/memv1/distill"

	"github.com/nightshift-dev/nightshift"
)

// LedgerEntry is what the ledger knows of one command, keyed by its canonical
// form (whitespace and quoting normalised).
type LedgerEntry struct {
	Canonical string   // the key: distill.Canonical of the command
	Command   string   // the command as first tried
	Targets   []string // files, units or packages it touched
	Tries     int      // how many times it was proposed
	Ran       int      // how many times it ran
	Failed    int      // tries that did not fix the rule (non-zero exit, blocked, timed out, or the re-check failed)
	Blocked   int      // tries refused by the ban list
	Fixed     bool     // the rule's re-check passed after it
	FirstTurn int
	LastTurn  int
}

// Ledger records every command tried in a conversation. Distillation never
// evicts an entry.
type Ledger struct {
	entries map[string]*LedgerEntry
	order   []string
	byTurn  map[int][]string // commands of each turn, for the re-check result
}

func newLedger() *Ledger {
	return &Ledger{entries: map[string]*LedgerEntry{}, byTurn: map[int][]string{}}
}

func (l *Ledger) record(turn int, s distill.Step) {
	if s.Command == "" {
		return
	}
	key := distill.Canonical(s.Command)
	e, ok := l.entries[key]
	if !ok {
		e = &LedgerEntry{Canonical: key, Command: s.Command, Targets: distill.Targets(s.Command), FirstTurn: turn}
		l.entries[key] = e
		l.order = append(l.order, key)
	}
	e.Tries++
	e.LastTurn = turn
	switch {
	case s.Action == nightshift.ActionBlocked || s.Action == nightshift.ActionRefused:
		e.Blocked++
		e.Failed++
	case s.Action == nightshift.ActionRan && s.ExitCode == 0 && s.Signal == "":
		e.Ran++
		// Failed or fixed is decided by the re-check.
		l.byTurn[turn] = append(l.byTurn[turn], key)
	case s.Action == nightshift.ActionRan:
		e.Ran++
		e.Failed++
	default:
		e.Failed++
	}
}

func (l *Ledger) check(turn int, c nightshift.CheckStatus) {
	for _, key := range l.byTurn[turn] {
		e := l.entries[key]
		if c == nightshift.CheckPass {
			e.Fixed = true
		} else {
			e.Failed++
		}
	}
	delete(l.byTurn, turn)
}

// Lookup returns the entry of command (compared in canonical form).
func (l *Ledger) Lookup(command string) (LedgerEntry, bool) {
	e, ok := l.entries[distill.Canonical(command)]
	if !ok {
		return LedgerEntry{}, false
	}
	return e.clone(), true
}

// Entries returns every entry in the order the commands were first tried.
func (l *Ledger) Entries() []LedgerEntry {
	out := make([]LedgerEntry, 0, len(l.order))
	for _, k := range l.order {
		out = append(out, l.entries[k].clone())
	}
	return out
}

// Len returns the number of distinct commands tried.
func (l *Ledger) Len() int { return len(l.order) }

func (e *LedgerEntry) clone() LedgerEntry {
	c := *e
	c.Targets = append([]string(nil), e.Targets...)
	return c
}

// repeats renders the most repeated failed commands for the history block,
// at most n of them, most tried first.
func (l *Ledger) repeats(n int, abbreviate func(string) string) string {
	var rep []*LedgerEntry
	for _, k := range l.order {
		if e := l.entries[k]; e.Tries > 1 && !e.Fixed {
			rep = append(rep, e)
		}
	}
	if len(rep) == 0 {
		return ""
	}
	sort.SliceStable(rep, func(i, j int) bool { return rep[i].Tries > rep[j].Tries })
	if len(rep) > n {
		rep = rep[:n]
	}
	parts := make([]string, len(rep))
	for i, e := range rep {
		parts[i] = "'" + abbreviate(e.Command) + "' ×" + itoa(e.Tries)
	}
	return "[Repeated without success: " + strings.Join(parts, ", ") + "]"
}
