package distill

import (
	"sort"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// Merge writes one group line for consecutive turns, e.g.
//
//	[Turns 1–12: ran sed on /etc/aide.conf ×5, apt-get install aide ×4, aideinit ×3; blocked rm on /var/lib/aide ×1 — re-check failed every time; aide config error ×7, dpkg lock held ×2]
//
// Steps are counted by gist (the program with its subcommand and the first
// command's targets), listed in order of first appearance; error classes
// are counted once per step that showed them, most frequent first (ties in
// order of first appearance). The outcome names the turns whose re-check
// passed, if any. The line is deterministic: the same summaries give the
// same bytes. Merge of no summaries is "".
func Merge(ss []Summary) string {
	if len(ss) == 0 {
		return ""
	}
	first, last := ss[0].Turn, ss[0].Turn
	for _, s := range ss {
		first, last = min(first, s.Turn), max(last, s.Turn)
	}
	var b strings.Builder
	if first == last {
		b.WriteString("[Turn " + strconv.Itoa(first) + ": ")
	} else {
		b.WriteString("[Turns " + strconv.Itoa(first) + "–" + strconv.Itoa(last) + ": ")
	}

	ran := newCounts()
	other := newCounts() // blocked, rejected, timed out, lost
	classes := newCounts()
	var passed []int
	failed, notRun, errored, notApplicable, gaveUp, idle := 0, 0, 0, 0, 0, 0
	for _, s := range ss {
		gave := s.GaveUp
		for _, st := range s.Steps {
			switch {
			case st.Tool == nightshift.ToolGiveUp:
				gave = true
			case st.Action == nightshift.ActionMalformed:
				other.add("rejected malformed " + orDefault(st.Tool, "tool") + " call")
			case st.Tool != nightshift.ToolApply && st.Command == "":
				ran.add("called " + st.Tool)
			case blocked(st.Action):
				other.add("blocked " + orDefault(st.Gist, st.Command))
			case st.Action == nightshift.ActionTimedOut:
				other.add("timed out " + orDefault(st.Gist, st.Command))
			case st.Action == nightshift.ActionUnknown:
				other.add("lost connection during " + orDefault(st.Gist, st.Command))
			default:
				ran.add(orDefault(st.Gist, st.Command))
			}
			for _, c := range st.Classes {
				classes.add(string(c))
			}
		}
		if gave {
			gaveUp++
		}
		if len(s.Steps) == 0 && !s.GaveUp {
			idle++
		}
		switch s.Check {
		case nightshift.CheckPass:
			passed = append(passed, s.Turn)
		case nightshift.CheckFail:
			failed++
		case nightshift.CheckError:
			errored++
		case nightshift.CheckNotApplicable:
			notApplicable++
		case nightshift.CheckNotRun:
			notRun++
		default:
			notRun++
		}
	}
	var acts []string
	if l := ran.list(false); l != "" {
		acts = append(acts, "ran "+l)
	}
	if l := other.list(false); l != "" {
		acts = append(acts, l)
	}
	if gaveUp > 0 {
		acts = append(acts, "gave up"+times(gaveUp))
	}
	if idle > 0 {
		acts = append(acts, "made no tool call"+times(idle))
	}
	if len(acts) == 0 {
		acts = append(acts, "no commands")
	}
	b.WriteString(strings.Join(acts, "; "))
	b.WriteString(" — ")
	b.WriteString(checkOutcome(passed, failed, errored, notApplicable, notRun, len(ss)))
	if l := classes.list(true); l != "" {
		b.WriteString("; ")
		b.WriteString(l)
	}
	b.WriteByte(']')
	return b.String()
}

func checkOutcome(passed []int, failed, errored, notApplicable, notRun, total int) string {
	if len(passed) > 0 {
		ns := make([]string, len(passed))
		for i, n := range passed {
			ns[i] = strconv.Itoa(n)
		}
		return "re-check passed after " + plural(len(passed), "turn ", "turns ") + strings.Join(ns, ", ") +
			", not after the others"
	}
	switch {
	case failed == total:
		return "re-check failed every time"
	case notRun == total:
		return "no re-check ran"
	}
	var parts []string
	if failed > 0 {
		parts = append(parts, "failed ×"+strconv.Itoa(failed))
	}
	if errored > 0 {
		parts = append(parts, "errored ×"+strconv.Itoa(errored))
	}
	if notApplicable > 0 {
		parts = append(parts, "not applicable ×"+strconv.Itoa(notApplicable))
	}
	if notRun > 0 {
		parts = append(parts, "not run ×"+strconv.Itoa(notRun))
	}
	return "re-check never passed (" + strings.Join(parts, ", ") + ")"
}

// counts counts keys, remembering their order of first appearance.
type counts struct {
	n     map[string]int
	order []string
}

func newCounts() *counts { return &counts{n: map[string]int{}} }

func (c *counts) add(k string) {
	if k == "" {
		return
	}
	if c.n[k] == 0 {
		c.order = append(c.order, k)
	}
	c.n[k]++
}

// list renders "k ×n, …" in order of first appearance, or by count (stable)
// when byCount is set.
func (c *counts) list(byCount bool) string {
	keys := append([]string(nil), c.order...)
	if byCount {
		sort.SliceStable(keys, func(i, j int) bool { return c.n[keys[i]] > c.n[keys[j]] })
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + times(c.n[k])
	}
	return strings.Join(parts, ", ")
}

// times renders a count after a phrase: "" for one, " ×n" otherwise.
func times(n int) string {
	if n == 1 {
		return ""
	}
	return " ×" + strconv.Itoa(n)
}

// maxTurnsListed bounds the turn numbers a TurnsLine lists; the others
// are counted.
const maxTurnsListed = 8

// TurnsLine writes one line for turns whose summaries have the same Body:
// "[Turn 4: body]" for one turn, "[Turns 4, 9, 14: body]" for a few (runs
// of consecutive turns as "4–6"), and for more than eight listed items the
// first five and the last two with the count: "[Turns 4, 9, 14, 15, 20 …
// 88, 97 (23 turns): body]". turns must be ascending.
func TurnsLine(turns []int, body string) string {
	if len(turns) == 0 {
		return ""
	}
	if len(turns) == 1 {
		return "[Turn " + strconv.Itoa(turns[0]) + ": " + body + "]"
	}
	var items []string
	for i := 0; i < len(turns); {
		j := i
		for j+1 < len(turns) && turns[j+1] == turns[j]+1 {
			j++
		}
		switch {
		case j == i:
			items = append(items, strconv.Itoa(turns[i]))
		case j == i+1:
			items = append(items, strconv.Itoa(turns[i]), strconv.Itoa(turns[j]))
		default:
			items = append(items, strconv.Itoa(turns[i])+"–"+strconv.Itoa(turns[j]))
		}
		i = j + 1
	}
	list := strings.Join(items, ", ")
	if len(items) > maxTurnsListed {
		list = strings.Join(items[:5], ", ") + " … " + strings.Join(items[len(items)-2:], ", ") +
			" (" + strconv.Itoa(len(turns)) + " turns)"
	}
	return "[Turns " + list + ": " + body + "]"
}
