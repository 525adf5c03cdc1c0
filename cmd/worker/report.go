package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/nightshift-dev/nightshift/memory"

	"github.com/nightshift-dev/nightshift"
)

// reporter prints the worker's events: one line per attempt and a summary
// table on a terminal, or one JSON object per event with --json.
type reporter struct {
	mu      sync.Mutex
	w       io.Writer
	json    bool
	limit   int
	cmds    []string
	exit    string
	started bool
	// mem is the memory's last prompt event (set when memory() was wired
	// into the worker): how many turns the prompt showed distilled.
	mem *memory.Event
}

// memory returns the observer of the worker's memory that feeds the
// table's MEMORY column.
func (r *reporter) memory() memory.Observer { return memObserver{r} }

type memObserver struct{ r *reporter }

func (o memObserver) Observe(e memory.Event) {
	if e.Kind != memory.EventPrompt {
		return
	}
	o.r.mu.Lock()
	defer o.r.mu.Unlock()
	o.r.mem = &e
}

func newReporter(w io.Writer, jsonOut bool, limit int) *reporter {
	return &reporter{w: w, json: jsonOut, limit: limit}
}

func (r *reporter) Observe(e nightshift.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.json {
		b, err := json.Marshal(e)
		if err == nil {
			fmt.Fprintf(r.w, "%s\n", b)
		}
		return
	}
	if !r.started {
		fmt.Fprintf(r.w, "%-34s %4s  %-44s %5s  %-6s %-13s %s\n", "RULE", "TRY", "COMMAND", "EXIT", "CHECK", "PROMPT/LIMIT", "MEMORY")
		r.started = true
	}
	switch e.Kind {
	case nightshift.EventCheck:
		if e.Attempt == 0 {
			fmt.Fprintf(r.w, "%-34s %4s  %-44s %5s  %-6s\n", e.Rule, "-", "(initial check)", "", e.Check)
		}
	case nightshift.EventCommand:
		c := e.Command
		if c == "" {
			c = "(" + e.Action.String() + ")"
		} else if e.Action != nightshift.ActionRan {
			c = "(" + e.Action.String() + ") " + c
		}
		r.cmds = append(r.cmds, c)
		switch {
		case e.ExitCode != nil:
			r.exit = fmt.Sprint(*e.ExitCode)
		case e.Action == nightshift.ActionTimedOut:
			r.exit = "T/O"
		default:
			r.exit = "-"
		}
	case nightshift.EventAttempt:
		cmd := strings.Join(r.cmds, " ; ")
		cmd = strings.Join(strings.Fields(cmd), " ")
		if len([]rune(cmd)) > 44 {
			cmd = string([]rune(cmd)[:43]) + "…"
		}
		check := e.Check.String()
		switch {
		case e.Action == nightshift.ActionGiveUp:
			check = nightshift.ActionGiveUp.String()
		case e.Check == nightshift.CheckNotRun:
			check = "-"
		}
		mem := ""
		if r.mem != nil {
			mem = fmt.Sprintf("%d verbatim", r.mem.Verbatim)
			if r.mem.Distilled > 0 {
				mem += fmt.Sprintf(", %d distilled", r.mem.Distilled)
			}
			if r.mem.Groups > 0 {
				mem += fmt.Sprintf(" (%d merged lines)", r.mem.Groups)
			}
		}
		fmt.Fprintf(r.w, "%-34s %4d  %-44s %5s  %-6s %-13s %s\n", e.Rule, e.Attempt, cmd, r.exit, check, fmt.Sprintf("%d/%d", e.PromptTokens, e.Limit), mem)
		r.cmds, r.exit, r.mem = nil, "", nil
	case nightshift.EventRejected:
		fmt.Fprintf(r.w, "%-34s %4d  context-length rejection: server counted %d, we counted %d\n", e.Rule, e.Attempt, e.ServerTokens, e.LocalTokens)
	case nightshift.EventDistillFallback:
		fmt.Fprintf(r.w, "%-34s %4s  turn %d's summary is the deterministic line (model distiller: %s)\n", e.Rule, "-", e.Attempt, e.Fallback)
	default:
		// other events have no line in the table (--json prints them all)
	}
}

// summary prints the per-rule table (terminal mode) or a summary object.
func (r *reporter) summary(outs []nightshift.Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.json {
		b, _ := json.Marshal(map[string]any{"event": "summary", "rules": outs})
		fmt.Fprintf(r.w, "%s\n", b)
		return
	}
	fmt.Fprintln(r.w)
	tw := tabwriter.NewWriter(r.w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tSTATUS\tATTEMPTS\tCOMMANDS\tBLOCKED\tMAX PROMPT\tCACHED\tREJECTIONS\tTIME")
	var prompt, cached int
	for _, o := range outs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%.0f%%\t%d\t%s\n", o.Rule, o.Status, o.Attempts, o.Commands, o.Blocked,
			o.MaxPromptTokens, 100*o.CacheShare(), o.ContextRejections, o.Duration.Round(1e7))
		prompt, cached = prompt+o.PromptTokens, cached+o.CachedTokens
	}
	tw.Flush()
	if prompt > 0 {
		fmt.Fprintf(r.w, "%d of %d prompt tokens (%.1f%%) came from the model server's prefix cache.\n",
			cached, prompt, 100*float64(cached)/float64(prompt))
	}
}
