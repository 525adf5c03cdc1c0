package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/nightshift-dev/nightshift"
)

//go:embed report.html.tmpl
var htmlTemplate string

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"comma": comma,
	"dur":   formatDuration,
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"label": outcomeLabel,
	"pct":   func(n, total int) string { return fmt.Sprintf("%.1f", 100*float64(n)/float64(max(total, 1))) },
	"add":   func(a, b int) int { return a + b },
	"plural": func(n int, word string) string {
		if n == 1 {
			return "1 " + word
		}
		return fmt.Sprintf("%d %ss", n, word)
	},
	"isSet":   func(p *int) bool { return p != nil },
	"deref":   func(p *int) int { return *p },
	"ruleTag": func(i int) string { return fmt.Sprintf("r%d", i) },
	"cellTag": func(i, j int) string { return fmt.Sprintf("r%d-h%d", i, j) },
}).Parse(htmlTemplate))

// htmlData is what the template renders.
type htmlData struct {
	Run      *Run
	Summary  Summary
	Outcomes []outcomeCount
	Hosts    []string
	Rules    []htmlRule
}

type outcomeCount struct {
	Outcome nightshift.RuleStatus
	Count   int
}

type htmlRule struct {
	Index   int
	Rule    string
	Title   string
	Chart   *chart
	Results []htmlResult
	Cells   []htmlCell     // one per host of the run, in host order
	Counts  []outcomeCount // the rule's outcomes over its hosts, in report order
	Passed  int
}

type htmlResult struct {
	TaskResult
	HostIndex       int
	Commands        int
	MaxPromptTokens int
	Limit           int
}

type htmlCell struct {
	Host      string
	HostIndex int
	Outcome   nightshift.RuleStatus // RuleNone when the rule did not run on the host
}

// WriteHTML writes the run as one self-contained HTML page (inline CSS and
// SVG, no script, no external asset). It rejects a run that fails Validate.
func WriteHTML(w io.Writer, run *Run) error {
	if err := run.Validate(); err != nil {
		return err
	}
	run = cleanRun(run)
	d := htmlData{Run: run, Summary: NewSummary(run), Hosts: hostsOf(run.Results)}
	for _, o := range nightshift.RuleStatuses() {
		if n := d.Summary.Totals.Outcomes[o]; n > 0 {
			d.Outcomes = append(d.Outcomes, outcomeCount{o, n})
		}
	}
	hostIndex := map[string]int{}
	for i, h := range d.Hosts {
		hostIndex[h] = i
	}
	for i, g := range byRule(run.Results) {
		hr := htmlRule{Index: i, Rule: g.Rule, Title: g.Title, Chart: newChart(g)}
		byHost := map[string]nightshift.RuleStatus{}
		for _, r := range g.Results {
			x := htmlResult{TaskResult: r, HostIndex: hostIndex[r.Host]}
			for _, a := range r.Attempts {
				x.Commands += len(a.Commands)
				x.MaxPromptTokens = max(x.MaxPromptTokens, a.PromptTokens)
				x.Limit = max(x.Limit, a.Limit)
			}
			hr.Results = append(hr.Results, x)
			byHost[r.Host] = r.Outcome
			if r.Outcome.Passed() {
				hr.Passed++
			}
		}
		for _, o := range nightshift.RuleStatuses() {
			n := 0
			for _, r := range g.Results {
				if r.Outcome == o {
					n++
				}
			}
			if n > 0 {
				hr.Counts = append(hr.Counts, outcomeCount{o, n})
			}
		}
		for j, h := range d.Hosts {
			hr.Cells = append(hr.Cells, htmlCell{Host: h, HostIndex: j, Outcome: byHost[h]})
		}
		d.Rules = append(d.Rules, hr)
	}
	if err := htmlTmpl.Execute(w, d); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

func outcomeLabel(o nightshift.RuleStatus) string {
	switch o {
	case nightshift.RuleFixed:
		return "fixed"
	case nightshift.RuleCompliant:
		return "compliant"
	case nightshift.RuleNotFixed:
		return "not fixed"
	case nightshift.RuleNeedsAccessChange:
		return "needs access change"
	case nightshift.RuleGaveUp:
		return "gave up"
	case nightshift.RuleCheckError:
		return "check error"
	case nightshift.RuleNotApplicable:
		return "not applicable"
	case nightshift.RuleUnreachable:
		return "unreachable"
	case nightshift.RuleInterrupted:
		return "interrupted"
	case nightshift.RuleFailed:
		return "failed"
	case nightshift.RuleNone:
		return "not run"
	}
	return o.String()
}

func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// cleanRun returns a copy of run whose text holds only characters that
// HTML and XML can carry (see xmlSafe): terminal escapes and other control
// characters in command output become U+FFFD instead of reaching the page.
func cleanRun(run *Run) *Run {
	c := *run
	c.Name, c.Model = xmlSafe(run.Name), xmlSafe(run.Model)
	c.Results = make([]TaskResult, len(run.Results))
	for i, r := range run.Results {
		r.Rule, r.Title, r.Host, r.Reason = xmlSafe(r.Rule), xmlSafe(r.Title), xmlSafe(r.Host), xmlSafe(r.Reason)
		attempts := make([]Attempt, len(r.Attempts))
		for j, a := range r.Attempts {
			a.Check = xmlSafe(a.Check)
			cmds := make([]Command, len(a.Commands))
			for k, cmd := range a.Commands {
				cmd.Command, cmd.Action, cmd.Check = xmlSafe(cmd.Command), xmlSafe(cmd.Action), xmlSafe(cmd.Check)
				cmd.Output, cmd.Detail = xmlSafe(cmd.Output), xmlSafe(cmd.Detail)
				cmds[k] = cmd
			}
			a.Commands = cmds
			attempts[j] = a
		}
		r.Attempts = attempts
		c.Results[i] = r
	}
	return &c
}
