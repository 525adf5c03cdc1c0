package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// Chart geometry, in SVG user units.
const (
	chartW, chartH                         = 720, 240
	padLeft, padRight, padTop, padBottom   = 84, 20, 16, 36
	plotW                                  = chartW - padLeft - padRight
	plotH                                  = chartH - padTop - padBottom
	plotLeft, plotTop, plotRight, plotBase = padLeft, padTop, padLeft + plotW, padTop + plotH
)

// chart is the data of one rule's SVG chart of prompt tokens per attempt.
type chart struct {
	W, H                int
	Left, Top, Right    int
	Base                int
	Series              []series
	Limits              []hline
	YTicks, XTicks      []tick
	Label               string // accessible description
	MaxAttempt, MaxSeen int
}

type series struct {
	Host    string
	Outcome nightshift.RuleStatus
	Points  string // polyline points
	Dots    []dot
}

type dot struct {
	X, Y         string
	Attempt      int
	Tokens       int
	Limit        int
	Host         string
	OverTheLimit bool
}

type hline struct {
	Y     string
	Value int
	Label string
}

type tick struct {
	Pos   string
	Label string
}

// newChart returns the chart of a rule's results, or nil when no result has
// an attempt.
func newChart(g ruleGroup) *chart {
	maxAttempt, top := 0, 0
	var limits []int
	for _, r := range g.Results {
		maxAttempt = max(maxAttempt, len(r.Attempts))
		for _, a := range r.Attempts {
			top = max(top, a.PromptTokens, a.Limit)
			if a.Limit > 0 && !slices.Contains(limits, a.Limit) {
				limits = append(limits, a.Limit)
			}
		}
	}
	if maxAttempt == 0 {
		return nil
	}
	slices.Sort(limits)
	yMax := niceCeil(top + top/12)
	x := func(i int) float64 { // i is 1-based
		if maxAttempt == 1 {
			return plotLeft + plotW/2
		}
		return plotLeft + float64(i-1)*plotW/float64(maxAttempt-1)
	}
	y := func(v int) float64 { return plotBase - float64(v)*plotH/float64(yMax) }
	c := &chart{W: chartW, H: chartH, Left: plotLeft, Top: plotTop, Right: plotRight, Base: plotBase, MaxAttempt: maxAttempt}
	for _, l := range limits {
		// Whole pixels keep the limit line crisp.
		c.Limits = append(c.Limits, hline{Y: num(float64(int(y(l))) + 0.5), Value: l, Label: "limit " + comma(l)})
	}
	for _, r := range g.Results {
		if len(r.Attempts) == 0 {
			continue
		}
		s := series{Host: r.Host, Outcome: r.Outcome}
		var pts []string
		for i, a := range r.Attempts {
			n := a.Number
			if n <= 0 {
				n = i + 1
			}
			px, py := num(x(i+1)), num(y(a.PromptTokens))
			pts = append(pts, px+","+py)
			s.Dots = append(s.Dots, dot{X: px, Y: py, Attempt: n, Tokens: a.PromptTokens, Limit: a.Limit, Host: r.Host, OverTheLimit: a.Limit > 0 && a.PromptTokens > a.Limit})
		}
		s.Points = strings.Join(pts, " ")
		c.Series = append(c.Series, s)
	}
	for _, v := range yTicks(yMax) {
		c.YTicks = append(c.YTicks, tick{Pos: num(y(v)), Label: comma(v)})
	}
	step := max(1, (maxAttempt+9)/10)
	for i := 1; i <= maxAttempt; i += step {
		c.XTicks = append(c.XTicks, tick{Pos: num(x(i)), Label: strconv.Itoa(i)})
	}
	c.Label = fmt.Sprintf("prompt tokens per attempt for %s: %d attempts at most, limit %s", g.Rule, maxAttempt, joinInts(limits))
	return c
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten (at least 10).
func niceCeil(v int) int {
	if v < 10 {
		return 10
	}
	p := 1
	for p*10 <= v {
		p *= 10
	}
	for _, m := range []int{10, 20, 25, 50, 100} {
		if c := p * m / 10; c >= v {
			return c
		}
	}
	return p * 10
}

// yTicks returns about five round values from 0 to yMax.
func yTicks(yMax int) []int {
	step := niceCeil(yMax / 5)
	if step <= 0 {
		step = 1
	}
	var out []int
	for v := 0; v <= yMax; v += step {
		out = append(out, v)
	}
	return out
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// comma formats n with thousands separators.
func comma(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func joinInts(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, comma(x))
	}
	if len(s) == 0 {
		return "unknown"
	}
	return strings.Join(s, ", ")
}
