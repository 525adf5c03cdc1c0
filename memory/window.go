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

// plan says how to build one candidate prompt.
type plan struct {
	keep       int // turns kept verbatim (older ones shown as lines)
	outputCap  int // token cap for tool outputs of non-current verbatim turns (0: none)
	currentCap int // token cap for the current turn's tool outputs (0: none)
}

// outputCaps are the per-result token caps tried on older verbatim turns,
// largest first; currentCaps those tried on the current turn.
var (
	outputCaps  = []int{2048, 1024, 512, 256, 128, 64}
	currentCaps = []int{8192, 4096, 2048, 1024, 512, 256, 128, 64}
)

// Prompt prepares the messages for the next model call, keeping them within
// the budget as the package comment describes. It never returns a prompt
// over the hard limit: it returns an *OverflowError instead.
func (m *Memory) Prompt(ctx context.Context) (Prompt, error) {
	if !m.compressed {
		p, err := m.build(ctx, plan{keep: len(m.turns)})
		if err != nil {
			return Prompt{}, err
		}
		if !p.Assessment.OverSoft() {
			m.emitPrompt(p, plan{keep: len(m.turns)})
			return p, nil
		}
		m.compressed = true
	}
	// Over the soft limit: everything but the last K turns becomes lines, for good.
	if target := len(m.turns) - m.cfg.KeepTurns; target > m.distilled {
		if err := m.distillUpTo(ctx, target); err != nil {
			return Prompt{}, err
		}
	}
	if err := m.compact(ctx); err != nil {
		return Prompt{}, err
	}
	verbatim := len(m.turns) - m.distilled
	p, err := m.build(ctx, plan{keep: verbatim})
	if err != nil {
		return Prompt{}, err
	}
	if !p.Assessment.Over() {
		m.emitPrompt(p, plan{keep: verbatim})
		return p, nil
	}
	// Still over the hard limit: degrade step by step. First fewer
	// verbatim turns; then older turns' tool outputs are cut; then the
	// current turn's too, always leaving it twice the room of the others,
	// since it is what the model must answer.
	var plans []plan
	for k := verbatim - 1; k >= 1; k-- {
		plans = append(plans, plan{keep: k})
	}
	one := min(verbatim, 1)
	for _, c := range outputCaps {
		plans = append(plans, plan{keep: one, outputCap: c})
	}
	for _, c := range currentCaps {
		plans = append(plans, plan{keep: one, outputCap: max(c/2, outputCaps[len(outputCaps)-1]), currentCap: c})
	}
	best := p
	for _, pl := range plans {
		q, err := m.build(ctx, pl)
		if err != nil {
			return Prompt{}, err
		}
		a := q.Assessment
		m.emit(Event{Kind: EventDegrade, Turn: len(m.turns), Assessment: &a, Distilled: len(m.turns) - pl.keep,
			Verbatim: pl.keep, KeepTurns: pl.keep, OutputCap: pl.outputCap, CurrentCap: pl.currentCap})
		if q.Assessment.Total < best.Assessment.Total {
			best = q
		}
		if !q.Assessment.Over() {
			m.emitPrompt(q, pl)
			return q, nil
		}
	}
	return Prompt{}, &OverflowError{Assessment: best.Assessment}
}

func (m *Memory) emitPrompt(p Prompt, pl plan) {
	a := p.Assessment
	m.emit(Event{Kind: EventPrompt, Turn: len(m.turns), Assessment: &a, Messages: len(p.Messages),
		Distilled: len(m.turns) - pl.keep, Verbatim: pl.keep, Groups: len(m.groups), KeepTurns: pl.keep,
		OutputCap: pl.outputCap, CurrentCap: pl.currentCap})
}

// distillUpTo replaces turns[m.distilled:target] by lines, for good.
func (m *Memory) distillUpTo(ctx context.Context, target int) error {
	before, err := m.build(ctx, plan{keep: len(m.turns) - m.distilled})
	if err != nil {
		return err
	}
	from := m.distilled
	lines := make([]string, 0, target-from)
	for i := from; i < target; i++ {
		l, err := m.line(ctx, i)
		if err != nil {
			return err
		}
		lines = append(lines, l)
	}
	m.distilled = target
	after, err := m.build(ctx, plan{keep: len(m.turns) - m.distilled})
	if err != nil {
		return err
	}
	m.emit(Event{Kind: EventDistill, Turn: len(m.turns), FromTurn: from + 1, ToTurn: target,
		TokensBefore: before.Assessment.Prompt, TokensAfter: after.Assessment.Prompt, Lines: lines, Before: before.Messages,
		Distilled: m.distilled, Verbatim: len(m.turns) - m.distilled})
	return nil
}

// build renders a candidate prompt for pl and assesses it.
func (m *Memory) build(ctx context.Context, pl plan) (Prompt, error) {
	first := len(m.turns) - pl.keep // first verbatim turn
	msgs := make([]openai.ChatCompletionMessage, 0, 3+pl.keep*4)
	msgs = append(msgs, m.system, m.task)

	// Once compressed, only the latest feedback of each kind stays verbatim.
	latest := map[FeedbackKind]int{}
	hidden := map[FeedbackKind]int{}
	if m.compressed {
		for _, t := range m.turns {
			for _, f := range t.feedback {
				if f.seq > latest[f.kind] {
					latest[f.kind] = f.seq
				}
			}
		}
		for _, t := range m.turns {
			for _, f := range t.feedback {
				if f.seq != latest[f.kind] {
					hidden[f.kind]++
				}
			}
		}
	}
	if first > 0 || len(hidden) > 0 {
		block, err := m.historyBlock(ctx, first, hidden)
		if err != nil {
			return Prompt{}, err
		}
		if block != "" {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: block})
		}
	}
	currentStart := len(msgs)
	for i := first; i < len(m.turns); i++ {
		if i == len(m.turns)-1 {
			currentStart = len(msgs)
		}
		capTokens := pl.outputCap
		if i == len(m.turns)-1 {
			capTokens = pl.currentCap
		}
		msgs = m.appendTurn(msgs, m.turns[i], capTokens, latest)
	}
	pc, err := m.cfg.Prompt.Count(msgs, m.cfg.Tools)
	if err != nil {
		return Prompt{}, fmt.Errorf("count prompt at turn %d: %w", len(m.turns), err)
	}
	a := m.cfg.Budget.AssessCount(pc, budget.Split{SystemEnd: 2, CurrentStart: currentStart})
	if m.maxPrompt > 0 {
		a.Limit = min(a.Limit, m.maxPrompt+a.Reserve)
	}
	a.Soft = min(a.Soft, a.Limit)
	return Prompt{Messages: msgs, Tools: m.cfg.Tools, Assessment: a}, nil
}

// appendTurn renders one verbatim turn: the assistant message, one tool
// message per tool call (a placeholder where no result was recorded, so no
// call is ever left without its result) and the turn's visible feedback.
func (m *Memory) appendTurn(msgs []openai.ChatCompletionMessage, t *turn, capTokens int, latest map[FeedbackKind]int) []openai.ChatCompletionMessage {
	msgs = append(msgs, t.assistant)
	for _, c := range t.assistant.ToolCalls {
		r, ok := t.results[c.ID]
		if !ok {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: c.ID,
				Content: "[no result was recorded for this call]"})
			continue
		}
		msg := r.msg
		if capTokens > 0 {
			msg.Content = m.elided(r, capTokens)
		}
		msgs = append(msgs, msg)
	}
	var fb []feedback
	for _, f := range t.feedback {
		if !m.compressed || f.seq == latest[f.kind] {
			fb = append(fb, f)
		}
	}
	if len(fb) > 0 {
		sort.SliceStable(fb, func(i, j int) bool { return fb[i].seq < fb[j].seq })
		text := fb[0].text
		for _, f := range fb[1:] {
			text += "\n\n" + f.text
		}
		msgs = append(msgs, feedbackMessage(text))
	}
	return msgs
}

// elided returns r's content cut to capTokens, cached per cap.
func (m *Memory) elided(r *result, capTokens int) string {
	if r.tokens < 0 {
		r.tokens = m.cfg.Text.Count(r.msg.Content)
	}
	if r.tokens <= capTokens {
		return r.msg.Content
	}
	if s, ok := r.elided[capTokens]; ok {
		return s
	}
	if r.elided == nil {
		r.elided = map[int]string{}
	}
	s := elide(r.msg.Content, capTokens, r.tokens, m.cfg.Text.Count)
	r.elided[capTokens] = s
	return s
}

// LimitPrompt makes every later prompt hold at most maxPromptTokens prompt
// tokens (besides the budget's own limit) and compresses from now on. The
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
	m.compressed = true
}
