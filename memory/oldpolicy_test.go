package memory

import (
	"context"
	"fmt"
	"sort"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
)

// oldPolicy is the memory's compaction before issue 14 (commit 4d35740),
// the baseline BenchmarkCachePolicies measures the current one against, on
// the same turns in the same run. It works on a Memory's recorded turns
// (AddAssistant, AddToolResult, AddFeedback as usual) and replaces only
// Prompt:
//   - until a prompt first passes the soft limit, every turn is verbatim;
//   - from then on (compressed), every prompt keeps the last K turns
//     verbatim and every older turn as a line of the history block, which is
//     re-rendered at every call, right after the task message: one more line
//     per call;
//   - once compressed, only the latest feedback message of each kind is
//     shown; the others are counted at the end of the history block;
//   - over the hard limit, K drops first (down to 1), then older turns'
//     outputs are cut (2,048 … 64 tokens), then the current turn's, each
//     prompt built anew with those caps.
//
// The code is 4d35740's Prompt, build and appendTurn, with today's history
// block (the same lines, the counts of hidden feedback appended as 4d35740
// did) and today's elide; the memory's Memory type and its line and group
// bookkeeping are shared.
type oldPolicy struct {
	m          *Memory
	compressed bool
	elided     map[*result]map[int]string
}

func newOldPolicy(m *Memory) *oldPolicy {
	return &oldPolicy{m: m, elided: map[*result]map[int]string{}}
}

// oldPlan says how to build one candidate prompt.
type oldPlan struct {
	keep       int // turns kept verbatim (older ones shown as lines)
	outputCap  int // token cap for tool outputs of non-current verbatim turns (0: none)
	currentCap int // token cap for the current turn's tool outputs (0: none)
}

// The per-result token caps 4d35740 tried on older verbatim turns and on
// the current turn, largest first.
var (
	oldOutputCaps  = []int{2048, 1024, 512, 256, 128, 64}
	oldCurrentCaps = []int{8192, 4096, 2048, 1024, 512, 256, 128, 64}
)

var oldFeedbackNames = map[FeedbackKind]string{
	FeedbackCheck:     "re-check results",
	FeedbackBlocked:   "blocked-command notices",
	FeedbackRepeat:    "repetition warnings",
	FeedbackMalformed: "malformed-call errors",
}

// Prompt is 4d35740's Memory.Prompt.
func (o *oldPolicy) Prompt(ctx context.Context) (Prompt, error) {
	m := o.m
	if !o.compressed {
		p, err := o.build(ctx, oldPlan{keep: len(m.turns)})
		if err != nil {
			return Prompt{}, err
		}
		if !p.Assessment.OverSoft() {
			return p, nil
		}
		o.compressed = true
	}
	// Over the soft limit: everything but the last K turns becomes lines, for good.
	if target := len(m.turns) - m.cfg.KeepTurns; target > m.distilled {
		for i := m.distilled; i < target; i++ {
			if err := m.addHistory(ctx, i); err != nil {
				return Prompt{}, err
			}
		}
		m.distilled = target
	}
	verbatim := len(m.turns) - m.distilled
	p, err := o.build(ctx, oldPlan{keep: verbatim})
	if err != nil {
		return Prompt{}, err
	}
	if !p.Assessment.Over() {
		return p, nil
	}
	// Still over the hard limit: first fewer verbatim turns; then older
	// turns' tool outputs are cut; then the current turn's too.
	var plans []oldPlan
	for k := verbatim - 1; k >= 1; k-- {
		plans = append(plans, oldPlan{keep: k})
	}
	one := min(verbatim, 1)
	for _, c := range oldOutputCaps {
		plans = append(plans, oldPlan{keep: one, outputCap: c})
	}
	for _, c := range oldCurrentCaps {
		plans = append(plans, oldPlan{keep: one, outputCap: max(c/2, oldOutputCaps[len(oldOutputCaps)-1]), currentCap: c})
	}
	best := p
	for _, pl := range plans {
		q, err := o.build(ctx, pl)
		if err != nil {
			return Prompt{}, err
		}
		if q.Assessment.Total < best.Assessment.Total {
			best = q
		}
		if !q.Assessment.Over() {
			return q, nil
		}
	}
	return Prompt{}, &OverflowError{Assessment: best.Assessment}
}

// build is 4d35740's: it renders a candidate prompt for pl and assesses it.
func (o *oldPolicy) build(ctx context.Context, pl oldPlan) (Prompt, error) {
	m := o.m
	first := len(m.turns) - pl.keep // first verbatim turn
	msgs := make([]openai.ChatCompletionMessage, 0, 3+pl.keep*4)
	msgs = append(msgs, m.system, m.task)

	// Once compressed, only the latest feedback of each kind stays verbatim.
	latest := map[FeedbackKind]int{}
	hidden := map[FeedbackKind]int{}
	if o.compressed {
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
		// Today's history block of the distilled turns (the old policy's
		// own lines are not reproduced; its layout and caching are).
		block := m.historyBlock()
		if fb := oldFeedbackCounts(hidden); fb != "" {
			if block == "" {
				block = DefaultHistoryHeader + fb
			} else {
				block += "\n" + fb
			}
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
		msgs = o.appendTurn(msgs, m.turns[i], capTokens, latest)
	}
	pc, err := m.cfg.Model.Count(msgs, m.cfg.Tools)
	if err != nil {
		return Prompt{}, fmt.Errorf("count prompt at turn %d: %w", len(m.turns), err)
	}
	a := m.cfg.Model.Budget().AssessCount(pc, budget.Split{SystemEnd: 2, CurrentStart: currentStart})
	a.Soft = min(a.Soft, a.Limit)
	return Prompt{Messages: msgs, Tools: m.cfg.Tools, Assessment: a}, nil
}

// appendTurn is 4d35740's: the turn's calls, its outputs cut to capTokens
// (0: whole) and its visible feedback.
func (o *oldPolicy) appendTurn(msgs []openai.ChatCompletionMessage, t *turn, capTokens int, latest map[FeedbackKind]int) []openai.ChatCompletionMessage {
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
			msg.Content = o.elide(r, capTokens)
		}
		msgs = append(msgs, msg)
	}
	var fb []feedback
	for _, f := range t.feedback {
		if !o.compressed || f.seq == latest[f.kind] {
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

// elide returns r's content cut to capTokens, cached per cap.
func (o *oldPolicy) elide(r *result, capTokens int) string {
	if r.tokens < 0 {
		r.tokens = o.m.cfg.Model.CountText(r.msg.Content)
	}
	if r.tokens <= capTokens {
		return r.msg.Content
	}
	if s, ok := o.elided[r][capTokens]; ok {
		return s
	}
	if o.elided[r] == nil {
		o.elided[r] = map[int]string{}
	}
	s := elide(r.msg.Content, capTokens, r.tokens, o.m.cfg.Model.CountText, IsErrorLine)
	o.elided[r][capTokens] = s
	return s
}

func oldFeedbackCounts(hidden map[FeedbackKind]int) string {
	if len(hidden) == 0 {
		return ""
	}
	kinds := make([]string, 0, len(hidden))
	for k := range hidden {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		name := oldFeedbackNames[FeedbackKind(k)]
		if name == "" {
			name = k + " messages"
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", name, hidden[FeedbackKind(k)]))
	}
	return "[Earlier feedback not repeated here: " + strings.Join(parts, ", ") + "]"
}
