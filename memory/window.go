package memory

import (
	"context"
	"fmt"
	"sort"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
)

// OverflowError is returned by Prompt when the prompt cannot be brought under
// the hard limit even after every degradation step. It carries the breakdown
// of the smallest prompt that could be built.
type OverflowError struct {
	Assessment budget.Assessment
}

func (e *OverflowError) Error() string {
	return "prompt over the hard limit after distillation and every degradation step: " + e.Assessment.String()
}

// Prompt is a prepared request: the messages to send and their breakdown.
type Prompt struct {
	Messages   []openai.ChatCompletionMessage
	Tools      []openai.Tool
	Assessment budget.Assessment
}

// currentCaps are the token caps tried, largest first, on the current
// turn's tool outputs when the prompt cannot fit otherwise (those below
// Config.CurrentTokens).
var currentCaps = []int{8192, 4096, 2048, 1024, 512, 256, 128, 64}

// Prompt prepares the messages for the next model call, keeping them within
// the budget as the package comment describes. It never returns a prompt
// over the hard limit: it returns an *OverflowError instead.
//
// Between compactions the prompt only grows at its end: the history block
// and every turn already shown are rendered to the same bytes as in the
// previous prompt, so a server's prefix cache serves all of it. A prompt
// that would pass the soft limit is compacted once, down to the low-water
// mark, so that the following prompts can append again.
func (m *Memory) Prompt(ctx context.Context) (Prompt, error) {
	// A new turn's outputs are shown whole when the prompt with them
	// stays under the low-water mark, cut to CurrentTokens otherwise,
	// once: the turn keeps the bytes it is first shown with until a
	// compaction.
	if n := len(m.turns); n > 0 && !m.turns[n-1].admitted {
		m.turns[n-1].admitted = true
		m.admit(n - 1)
	}
	p, err := m.build(ctx)
	if err != nil {
		return Prompt{}, err
	}
	if !p.Assessment.OverSoft() && !p.Assessment.Over() {
		m.lastPrompt = p.Assessment.Prompt
		m.emitPrompt(p)
		return p, nil
	}
	p, err = m.compactPrompt(ctx, p)
	if err != nil {
		return Prompt{}, err
	}
	m.lastPrompt = p.Assessment.Prompt
	m.emitPrompt(p)
	return p, nil
}

// compactPrompt compacts the conversation of prompt p, which is over the
// soft limit, towards the low-water mark, in this order:
//  1. turns older than the last K become summary lines, oldest first,
//     until the prompt is at the mark;
//  2. the tool outputs of the older verbatim turns (not the current one)
//     are cut, once and for good, to head, tail and every error line,
//     oldest turn first, until the prompt is at the mark;
//  3. while the prompt is over the hard limit, the current turn's outputs
//     are cut, but to no less than twice the older turns' cap;
//  4. only then, and only while the prompt is over the hard limit, fewer
//     than K turns stay verbatim (down to the current turn alone);
//  5. last, the current turn's outputs are cut further, to the largest cap
//     that fits.
//
// It returns an *OverflowError when even that does not fit.
func (m *Memory) compactPrompt(ctx context.Context, p Prompt) (Prompt, error) {
	n := len(m.turns)
	target := min(m.lowWater(), p.Assessment.Limit-p.Assessment.Reserve)
	fits := func(q Prompt) bool { return q.Assessment.Prompt <= target && !q.Assessment.Over() }
	var err error

	// 1. Distil everything older than the last K turns, as far as needed.
	before, from := p, m.distilled
	for m.distilled < n-m.cfg.KeepTurns && !fits(p) {
		// As many of the oldest turns at once as their tokens say are
		// needed (an underestimate: their lines take some back), so the
		// history block and the prompt are rendered once per batch.
		k, saved := 1, m.turnTokens(m.distilled)
		for excess := p.Assessment.Prompt - target; m.distilled+k < n-m.cfg.KeepTurns && saved < excess; k++ {
			saved += m.turnTokens(m.distilled + k)
		}
		if p, err = m.distil(ctx, k); err != nil {
			return Prompt{}, err
		}
	}
	if m.distilled > from {
		m.emitDistill(ctx, before, from)
	}
	// 2. Cut the older verbatim turns' outputs, once each.
	for i := m.distilled; i < n-1 && !fits(p); i++ {
		if !m.cutTurn(i, m.cfg.OutputTokens) {
			continue
		}
		if p, err = m.build(ctx); err != nil {
			return Prompt{}, err
		}
		m.emitDegrade(p, 0)
	}
	// 3. The current turn's outputs, down to twice an older turn's cap.
	curCaps := currentCaps
	for len(curCaps) > 0 && curCaps[0] >= m.cfg.CurrentTokens {
		curCaps = curCaps[1:]
	}
	for len(curCaps) > 0 && p.Assessment.Over() && curCaps[0] >= 2*m.cfg.OutputTokens {
		if p, err = m.cutCurrent(ctx, p, curCaps[0]); err != nil {
			return Prompt{}, err
		}
		curCaps = curCaps[1:]
	}
	// 4. Fewer than K verbatim turns, only if they cannot fit at all.
	before, from = p, m.distilled
	for m.distilled < n-1 && p.Assessment.Over() {
		if p, err = m.distil(ctx, 1); err != nil {
			return Prompt{}, err
		}
		m.emitDegrade(p, 0)
	}
	if m.distilled > from {
		m.emitDistill(ctx, before, from)
	}
	// 5. The current turn's outputs, as far as needed.
	for ; len(curCaps) > 0 && p.Assessment.Over(); curCaps = curCaps[1:] {
		if p, err = m.cutCurrent(ctx, p, curCaps[0]); err != nil {
			return Prompt{}, err
		}
	}
	if p.Assessment.Over() {
		return Prompt{}, &OverflowError{Assessment: p.Assessment}
	}
	return p, nil
}

// cutCurrent cuts the current turn's outputs to capTokens and returns the
// new prompt (p when nothing was cut).
func (m *Memory) cutCurrent(ctx context.Context, p Prompt, capTokens int) (Prompt, error) {
	if !m.cutTurn(len(m.turns)-1, capTokens) {
		return p, nil
	}
	q, err := m.build(ctx)
	if err != nil {
		return Prompt{}, err
	}
	m.emitDegrade(q, capTokens)
	return q, nil
}

// lowWater returns the prompt tokens compaction aims for.
func (m *Memory) lowWater() int {
	if m.cfg.LowWaterTokens > 0 {
		return m.cfg.LowWaterTokens
	}
	soft := m.cfg.Model.Budget().SoftLimit() - m.cfg.Model.Budget().Reserve()
	if m.maxPrompt > 0 {
		soft = min(soft, m.maxPrompt)
	}
	return soft * m.cfg.LowWaterPercent / 100
}

// admit shows new turn i's outputs whole when the prompt with them stays
// under the low-water mark (the last prompt's tokens plus theirs), and
// cuts each to CurrentTokens otherwise: a conversation with room shows
// what the commands printed, and one near its limit appends no more than
// a cut output, so that compactions, which send the prompt after the
// history block to the server anew, stay rare.
func (m *Memory) admit(i int) {
	total := 0
	for _, r := range m.turns[i].results {
		if r.tokens < 0 {
			r.tokens = m.cfg.Model.CountText(r.msg.Content)
		}
		total += r.tokens
	}
	if m.lastPrompt+total <= m.lowWater() {
		return
	}
	m.cutTurn(i, m.cfg.CurrentTokens)
}

// distil replaces the k oldest verbatim turns by their lines, for good,
// renders the history block anew (lines giving way when it passes its
// share) and returns the new prompt.
func (m *Memory) distil(ctx context.Context, k int) (Prompt, error) {
	for ; k > 0; k-- {
		if err := m.addHistory(ctx, m.distilled); err != nil {
			return Prompt{}, err
		}
		m.distilled++
	}
	m.block = m.historyBlock()
	return m.build(ctx)
}

// turnTokens estimates the prompt tokens turn i takes verbatim: its
// outputs as shown (counted), its call and feedback at four bytes a token.
func (m *Memory) turnTokens(i int) int {
	t := m.turns[i]
	n := len(t.assistant.Content) / 4
	for _, c := range t.assistant.ToolCalls {
		n += len(c.Function.Arguments)/4 + 8
	}
	for _, r := range t.results {
		switch {
		case r.shownCap > 0:
			n += r.shownCap
		default:
			if r.tokens < 0 {
				r.tokens = m.cfg.Model.CountText(r.msg.Content)
			}
			n += r.tokens
		}
	}
	for _, f := range t.feedback {
		n += len(f.text) / 4
	}
	return n
}

// cutTurn cuts turn i's tool outputs longer than capTokens to capTokens,
// for good. It reports whether anything changed.
func (m *Memory) cutTurn(i, capTokens int) bool {
	changed := false
	for _, r := range m.turns[i].results {
		if r.shownCap != 0 && r.shownCap <= capTokens {
			continue
		}
		if r.tokens < 0 {
			r.tokens = m.cfg.Model.CountText(r.msg.Content)
		}
		if r.tokens <= capTokens {
			continue
		}
		r.shown = elide(r.msg.Content, capTokens, r.tokens, m.cfg.Model.CountText, m.cfg.ErrorLine)
		r.shownCap = capTokens
		changed = true
	}
	return changed
}

func (m *Memory) emitPrompt(p Prompt) {
	a := p.Assessment
	verbatim := len(m.turns) - m.distilled
	m.emit(Event{Kind: EventPrompt, Turn: len(m.turns), Assessment: &a, Messages: len(p.Messages),
		Distilled: m.distilled, Verbatim: verbatim, Groups: m.mergedLines(), KeepTurns: verbatim, Cut: m.cutResults()})
}

func (m *Memory) emitDegrade(p Prompt, currentCap int) {
	a := p.Assessment
	verbatim := len(m.turns) - m.distilled
	m.emit(Event{Kind: EventDegrade, Turn: len(m.turns), Assessment: &a, Distilled: m.distilled, Verbatim: verbatim,
		KeepTurns: verbatim, OutputCap: m.cfg.OutputTokens, CurrentCap: currentCap, Cut: m.cutResults()})
}

// mergedLines counts the history lines that stand for more than one turn.
func (m *Memory) mergedLines() int {
	n := 0
	for _, e := range m.entries {
		if len(e.turns) > 1 {
			n++
		}
	}
	return n
}

// cutResults counts the tool outputs shown cut.
func (m *Memory) cutResults() int {
	n := 0
	for _, t := range m.turns[m.distilled:] {
		for _, r := range t.results {
			if r.shownCap > 0 {
				n++
			}
		}
	}
	return n
}

// emitDistill reports the turns distilled since from, with the prompt they
// were part of.
func (m *Memory) emitDistill(ctx context.Context, before Prompt, from int) {
	lines := make([]string, 0, m.distilled-from)
	for i := from; i < m.distilled; i++ {
		l, _ := m.line(ctx, i) // cached by distil
		lines = append(lines, l)
	}
	m.emit(Event{Kind: EventDistill, Turn: len(m.turns), FromTurn: from + 1, ToTurn: m.distilled,
		TokensBefore: before.Assessment.Prompt, Lines: lines, Before: before.Messages,
		Distilled: m.distilled, Verbatim: len(m.turns) - m.distilled})
}

// build renders the prompt of the current state — the frozen history block,
// then every turn not distilled, each output as shown since it was cut (if
// it was) — and assesses it.
func (m *Memory) build(ctx context.Context) (Prompt, error) {
	msgs := make([]openai.ChatCompletionMessage, 0, 3+(len(m.turns)-m.distilled)*4)
	msgs = append(msgs, m.system, m.task)
	if m.block != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: m.block})
	}
	currentStart := len(msgs)
	for i := m.distilled; i < len(m.turns); i++ {
		if i == len(m.turns)-1 {
			currentStart = len(msgs)
		}
		msgs = appendTurn(msgs, m.turns[i])
	}
	pc, err := m.cfg.Model.Count(msgs, m.cfg.Tools)
	if err != nil {
		return Prompt{}, fmt.Errorf("count prompt at turn %d: %w", len(m.turns), err)
	}
	a := m.cfg.Model.Budget().AssessCount(pc, budget.Split{SystemEnd: 2, CurrentStart: currentStart})
	if m.maxPrompt > 0 {
		a.Limit = min(a.Limit, m.maxPrompt+a.Reserve)
	}
	a.Soft = min(a.Soft, a.Limit)
	return Prompt{Messages: msgs, Tools: m.cfg.Tools, Assessment: a}, nil
}

// appendTurn renders one verbatim turn: the assistant message, one tool
// message per tool call (a placeholder where no result was recorded, so no
// call is ever left without its result) and every feedback message of the
// turn, joined in one user message. The same turn always renders to the
// same bytes, until compaction cuts its outputs.
func appendTurn(msgs []openai.ChatCompletionMessage, t *turn) []openai.ChatCompletionMessage {
	msgs = append(msgs, t.assistant)
	for _, c := range t.assistant.ToolCalls {
		r, ok := t.results[c.ID]
		if !ok {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: c.ID,
				Content: "[no result was recorded for this call]"})
			continue
		}
		msg := r.msg
		if r.shownCap > 0 {
			msg.Content = r.shown
		}
		msgs = append(msgs, msg)
	}
	if len(t.feedback) > 0 {
		fb := append([]feedback(nil), t.feedback...)
		sort.SliceStable(fb, func(i, j int) bool { return fb[i].seq < fb[j].seq })
		text := fb[0].text
		for _, f := range fb[1:] {
			text += "\n\n" + f.text
		}
		msgs = append(msgs, feedbackMessage(text))
	}
	return msgs
}

// LimitPrompt makes every later prompt hold at most maxPromptTokens prompt
// tokens (besides the budget's own limit), compacting the next prompt if it
// is larger. The
// worker calls it when the server rejected a prompt this memory counted as
// fitting — a smaller context window than configured, or a count that
// disagrees — so the memory distils harder rather than send it again.
// A value below 1 is ignored; the tightest limit given wins.
func (m *Memory) LimitPrompt(maxPromptTokens int) {
	if maxPromptTokens < 1 {
		return
	}
	if m.maxPrompt == 0 || maxPromptTokens < m.maxPrompt {
		m.maxPrompt = maxPromptTokens
	}
}
