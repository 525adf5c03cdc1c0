package memory

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/distill"
)

func itoa(n int) string { return strconv.Itoa(n) }

// line returns the cached one-line summary of turn i (0-based).
func (m *Memory) line(ctx context.Context, i int) (string, error) {
	t := m.turns[i]
	if !t.hasLine {
		if _, ok := m.cfg.Distiller.(deterministic); ok {
			// The line is the summary's: summarise once (ClassifyError
			// reads the whole output) for both the line and its body.
			t.line, t.hasLine = m.summary(i).Line(), true
			return t.line, nil
		}
		l, err := m.cfg.Distiller.Line(ctx, t.facts)
		if err != nil {
			return "", fmt.Errorf("distil turn %d: %w", t.number, err)
		}
		t.line, t.hasLine = l, true
	}
	return t.line, nil
}

func (m *Memory) summary(i int) distill.Summary {
	t := m.turns[i]
	if t.summary == nil {
		s := m.det().Summarize(t.facts)
		t.summary = &s
	}
	return *t.summary
}

func (m *Memory) det() *distill.Distiller {
	if d, ok := m.cfg.Distiller.(deterministic); ok {
		return d.d
	}
	return distill.New(distill.Config{Counter: textCounter{m.cfg.Model}})
}

// entry is one line of the history block: the distilled turns whose lines
// say the same thing (the same canonical commands with the same outcome,
// error line and re-check line), in order of their first turn.
type entry struct {
	body  string
	turns []int // turn numbers, ascending
	// plain: every turn ran commands that exited 0 with no error line
	// and did not fix the rule (the first to give way to the budget).
	plain bool
	// commands are the canonical commands of the entry's turns.
	commands []string
	// changed are the files the change records say its turns changed.
	changed []string
	// line is the rendered line for lineTurns turns, tokens its count
	// with its newline.
	line      string
	lineTurns int
	tokens    int
	tokTurns  int // the turns tokens was counted for
}

// addHistory records distilled turn i in the history's entries.
func (m *Memory) addHistory(ctx context.Context, i int) error {
	l, err := m.line(ctx, i)
	if err != nil {
		return err
	}
	body := l
	if j := strings.Index(l, ": "); j >= 0 && strings.HasPrefix(l, "[Turn") {
		body = strings.TrimSuffix(l[j+2:], "]")
	}
	t := m.turns[i]
	if e, ok := m.entryOf[body]; ok {
		e.turns = append(e.turns, t.number)
		e.plain = e.plain && m.plain(i)
		return nil
	}
	e := &entry{body: body, turns: []int{t.number}, plain: m.plain(i)}
	for _, st := range m.summary(i).Steps {
		e.changed = append(e.changed, st.Changed...)
	}
	if m.entryOf == nil {
		m.entryOf, m.entriesOf = map[string]*entry{}, map[string][]int{}
	}
	for _, st := range t.facts.Steps {
		if st.Command != "" {
			c := distill.Canonical(st.Command)
			e.commands = append(e.commands, c)
			m.entriesOf[c] = append(m.entriesOf[c], len(m.entries))
		}
	}
	m.entryOf[body] = e
	m.entries = append(m.entries, e)
	return nil
}

// plain reports whether turn i only ran commands that exited 0 with no
// error line, and did not fix the rule: the turns whose lines give way
// first when the history passes its share.
func (m *Memory) plain(i int) bool {
	s := m.summary(i)
	if s.GaveUp || len(s.Steps) == 0 || s.Check == nightshift.CheckPass {
		return false
	}
	for _, st := range s.Steps {
		if st.Command == "" || st.Action != nightshift.ActionRan || st.Signal != "" || st.ExitCode != 0 || st.Error != "" || len(st.Classes) > 0 {
			return false
		}
	}
	return true
}

// historyBlock renders the history message: one line per distinct entry
// (turns that repeat an earlier one's facts are listed on its line,
// "Turns 4, 9, 14: …"), then the ledger's line of failed commands whose
// lines are not shown. When the lines pass the history's share
// (Config.HistoryTokens), lines give way in this order, each replaced by a
// count so every turn stays accounted for: first the turns that ran
// commands which exited 0 without an error and did not fix the rule,
// then the oldest distinct failures. The ledger's line is never dropped:
// every command that failed on its own (non-zero exit, signal, blocked,
// refused, timed out) and whose line gave way is named in it. It returns
// "" when there is nothing to say.
func (m *Memory) historyBlock() string {
	if len(m.entries) == 0 {
		return ""
	}
	shown := make([]bool, len(m.entries))
	total := m.blockTokens(m.cfg.HistoryHeader)
	for i, e := range m.entries {
		shown[i] = true
		total += m.entryTokens(e)
	}
	if total <= m.cfg.HistoryTokens {
		return m.renderHistory(shown)
	}
	// Lines give way, plain successes first, then the oldest failures,
	// until the estimate fits with room for the two count lines and the
	// ledger's names; then the rendering is checked and more give way
	// while it does not fit.
	before := total
	var order []int
	for _, plainPass := range []bool{true, false} {
		for i, e := range m.entries {
			if e.plain == plainPass {
				order = append(order, i)
			}
		}
	}
	countLines := 80 + m.cfg.HistoryTokens/6 // the count lines, with the changed files
	next, ledger := 0, 0
	for ; next < len(order) && total+countLines > m.cfg.HistoryTokens; next++ {
		i := order[next]
		shown[i] = false
		total -= m.entryTokens(m.entries[i])
		if !m.entries[i].plain && ledger < m.cfg.HistoryTokens/3 {
			for _, c := range m.entries[i].commands {
				n := m.blockTokens(distill.CodeSpan(m.abbreviate(c))+", ") + 2
				ledger += n
				total += n
			}
		}
	}
	block := m.renderHistory(shown)
	for ; next < len(order) && m.blockTokens(block) > m.cfg.HistoryTokens; next++ {
		shown[order[next]] = false
		block = m.renderHistory(shown)
	}
	m.emitMerge(before, block, shown)
	return block
}

// entryTokens returns the tokens of e's line and its newline, counted
// once per change of the line.
func (m *Memory) entryTokens(e *entry) int {
	if e.tokTurns != len(e.turns) {
		e.tokens, e.tokTurns = m.cfg.Model.CountText(e.rendered()+"\n"), len(e.turns)
	}
	return e.tokens
}

// foldedChanges names the files the change records say the folded plain
// turns changed, the newest first, within a sixth of the history's share
// ("; they changed /etc/a, /etc/b and 12 earlier files"), "" when none.
func (m *Memory) foldedChanges(shown []bool) string {
	var files []string
	seen := map[string]bool{}
	for i := len(m.entries) - 1; i >= 0; i-- {
		if e := m.entries[i]; !shown[i] && e.plain {
			for j := len(e.changed) - 1; j >= 0; j-- {
				if f := e.changed[j]; !seen[f] {
					seen[f] = true
					files = append(files, f)
				}
			}
		}
	}
	if len(files) == 0 {
		return ""
	}
	limit, used, n := m.cfg.HistoryTokens/6, 0, 0
	for ; n < len(files); n++ {
		c := m.blockTokens(files[n]+", ") + 1
		if used+c > limit {
			break
		}
		used += c
	}
	s := "; they changed " + strings.Join(files[:n], ", ")
	if rest := len(files) - n; rest > 0 {
		s += " and " + itoa(rest) + " earlier " + plural(rest, "file", "files")
	}
	return s
}

// rendered returns the entry's line, rendered once per change.
func (e *entry) rendered() string {
	if e.line == "" || e.lineTurns != len(e.turns) {
		e.line, e.lineTurns = distill.TurnsLine(e.turns, e.body), len(e.turns)
	}
	return e.line
}

// renderHistory writes the block with the entries shown, the count lines
// of those that gave way and the ledger's line.
func (m *Memory) renderHistory(shown []bool) string {
	var b strings.Builder
	b.WriteString(m.cfg.HistoryHeader)
	var plainTurns, failTurns []int
	plainCmds, failCmds := 0, 0
	for i, e := range m.entries {
		switch {
		case shown[i]:
			continue
		case e.plain:
			plainTurns = append(plainTurns, e.turns...)
			plainCmds++
		default:
			failTurns = append(failTurns, e.turns...)
			failCmds++
		}
	}
	if len(failTurns) > 0 {
		b.WriteString(distill.TurnsLine(sortInts(failTurns), fmt.Sprintf("%d older distinct %s not shown line by line; the commands that failed are listed below",
			failCmds, plural(failCmds, "result", "results"))) + "\n")
	}
	if len(plainTurns) > 0 {
		b.WriteString(distill.TurnsLine(sortInts(plainTurns), fmt.Sprintf("%d %s exited 0 without an error and did not fix the rule%s",
			plainCmds, plural(plainCmds, "command", "commands"), m.foldedChanges(shown))) + "\n")
	}
	for i, e := range m.entries {
		if shown[i] {
			b.WriteString(e.rendered())
			b.WriteByte('\n')
		}
	}
	if l := m.ledgerLine(shown); l != "" {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

func (m *Memory) emitMerge(before int, block string, shown []bool) {
	folded := 0
	for _, s := range shown {
		if !s {
			folded++
		}
	}
	m.emit(Event{Kind: EventMerge, Turn: len(m.turns), TokensBefore: before, TokensAfter: m.blockTokens(block),
		Groups: folded, Distilled: m.distilled})
}

// ledgerLine names every command that failed on its own (in the ledger:
// non-zero exit, signal, blocked, refused, timed out, lost) whose history
// line is not shown, with its tries, so the model does not repeat it
// unchanged. The names take at most a third of the history's share: past
// it the most tried and the newest are named, the others counted by
// program ("+850 more: sysctl ×850"), so the line stays bounded at any
// length (the Ledger itself, which the worker's repeat refusals read, keeps
// every command).
func (m *Memory) ledgerLine(shown []bool) string {
	visible := func(key string) bool {
		for _, i := range m.entriesOf[key] {
			if shown[i] {
				return true
			}
		}
		return false
	}
	// The candidates by priority: the commands tried more than once, most
	// tried and newest first, then those tried once, newest first.
	var multi, once []*LedgerEntry
	last := m.distilledTurn()
	for _, k := range m.ledger.order {
		e := m.ledger.entries[k]
		if e.Errors == 0 || e.Fixed || e.FirstTurn > last || visible(k) {
			continue
		}
		if e.Tries > 1 {
			multi = append(multi, e)
		} else {
			once = append(once, e)
		}
	}
	if len(multi)+len(once) == 0 {
		return ""
	}
	slices.SortStableFunc(multi, func(a, b *LedgerEntry) int {
		if a.Tries != b.Tries {
			return b.Tries - a.Tries
		}
		return b.LastTurn - a.LastTurn
	})
	slices.Reverse(once)
	limit := m.cfg.HistoryTokens / 3
	named := map[*LedgerEntry]string{}
	used := 0
	for _, e := range append(multi, once...) {
		part := distill.CodeSpan(m.abbreviate(e.Canonical)) + times(e.Tries)
		n := m.blockTokens(part+", ") + 1
		if used+n > limit {
			break
		}
		used += n
		named[e] = part
	}
	var parts []string
	rest := newProgramCounts()
	for _, k := range m.ledger.order {
		e := m.ledger.entries[k]
		if p, ok := named[e]; ok {
			parts = append(parts, p)
		} else if e.Errors > 0 && !e.Fixed && e.FirstTurn <= last && !visible(k) {
			rest.add(e.Canonical)
		}
	}
	if l := rest.String(); l != "" {
		parts = append(parts, l)
	}
	return "[Failed commands whose lines are not shown (ledger): " + strings.Join(parts, ", ") + "]"
}

// programCounts counts commands by their first word.
type programCounts struct {
	n     map[string]int
	order []string
	total int
}

func newProgramCounts() *programCounts { return &programCounts{n: map[string]int{}} }

func (p *programCounts) add(cmd string) {
	prog, _, _ := strings.Cut(cmd, " ")
	if p.n[prog] == 0 {
		p.order = append(p.order, prog)
	}
	p.n[prog]++
	p.total++
}

func (p *programCounts) String() string {
	if p.total == 0 {
		return ""
	}
	parts := make([]string, 0, min(len(p.order), 8))
	for i, prog := range p.order {
		if i == 8 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, prog+" ×"+itoa(p.n[prog]))
	}
	return "+" + itoa(p.total) + " more: " + strings.Join(parts, ", ")
}

// distilledTurn is the number of the newest distilled turn.
func (m *Memory) distilledTurn() int {
	if m.distilled == 0 {
		return 0
	}
	return m.turns[m.distilled-1].number
}

func times(n int) string {
	if n == 1 {
		return ""
	}
	return " ×" + itoa(n)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func sortInts(xs []int) []int {
	slices.Sort(xs)
	return xs
}

// DefaultHistoryHeader begins the history block (the message holding the
// distilled turns' one-line summaries) unless Config.HistoryHeader says
// otherwise; the lines below it are facts from the worker's records,
// written in the past tense.
const DefaultHistoryHeader = "Summary of earlier attempts, from the worker's records (oldest first; a line lists every turn that ran the same command with the same result):\n"

// abbreviate shortens a command for the ledger's line.
func (m *Memory) abbreviate(cmd string) string {
	cmd = strings.Join(strings.Fields(cmd), " ")
	const max = 60
	if r := []rune(cmd); len(r) > max {
		return string(r[:40]) + "…" + string(r[len(r)-19:])
	}
	return cmd
}

// blockTokens counts a history block line by line with a per-line cache: the
// block changes by a line or two per prompt, so recounting it whole would
// waste the tokenizer's time. The sum can differ from the exact count by a
// token per line boundary; it only decides when lines give way (the prompt
// itself is always counted exactly).
func (m *Memory) blockTokens(block string) int {
	if m.lineTokens == nil || len(m.lineTokens) > 4096 {
		m.lineTokens = make(map[string]int)
	}
	n := 0
	for _, l := range strings.SplitAfter(block, "\n") {
		c, ok := m.lineTokens[l]
		if !ok {
			c = m.cfg.Model.CountText(l)
			m.lineTokens[l] = c
		}
		n += c
	}
	return n
}
