package progress

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// stamp prefixes plain lines with the time since the start.
func (p *Progress) stamp() string {
	el := p.cfg.Now().Sub(p.start)
	if el < 0 {
		el = 0
	}
	s := int(el / time.Second)
	return fmt.Sprintf("[%02d:%02d:%02d] ", s/3600, s/60%60, s%60)
}

func (p *Progress) summary() string {
	done, total := p.totals()
	fixed, failed, down, skipped := 0, 0, 0, 0
	for _, h := range p.hosts {
		fixed += h.fixed
		failed += h.failed
		if h.down != "" {
			down++
			skipped += max(h.total-h.done, 0)
		}
	}
	s := fmt.Sprintf("%d/%d rules · elapsed %s · ETA %s · %d fixed or compliant, %d not",
		done, total, short(p.cfg.Now().Sub(p.start)), p.eta(), fixed, failed)
	if down > 0 {
		s += fmt.Sprintf(" · %d %s down, %d %s skipped", down, plural(down, "host", "hosts"), skipped, plural(skipped, "rule", "rules"))
	}
	return s
}

// lines renders the live block: the summary, then one line per host
// (running hosts first), cut to the width.
func (p *Progress) lines() []string {
	out := []string{p.summary()}
	var running, down, waiting, finished []*host
	for _, h := range p.hosts {
		switch {
		case h.down != "":
			down = append(down, h)
		case h.rule != "":
			running = append(running, h)
		case h.done >= h.total && h.total > 0:
			finished = append(finished, h)
		default:
			waiting = append(waiting, h)
		}
	}
	order := append(append(append(running, down...), waiting...), finished...)
	nameW := 0
	for _, h := range order {
		nameW = max(nameW, utf8.RuneCountInString(h.name))
	}
	nameW = min(nameW, 24)
	shown := order
	if len(shown) > p.cfg.HostLines {
		shown = shown[:p.cfg.HostLines]
	}
	for _, h := range shown {
		out = append(out, "  "+pad(h.name, nameW)+"  "+p.hostLine(h))
	}
	if n := len(order) - len(shown); n > 0 {
		out = append(out, fmt.Sprintf("  … and %d more %s", n, plural(n, "host", "hosts")))
	}
	for i, l := range out {
		out[i] = cut(l, p.cfg.Width-1)
	}
	return out
}

func (p *Progress) hostLine(h *host) string {
	s := fmt.Sprintf("%*d/%-3d", 3, h.done, max(h.total, h.done))
	switch {
	case h.down != "":
		return s + " " + h.down
	case h.rule != "":
		s += " ▸ " + h.rule
		if h.attempt > 0 {
			s += fmt.Sprintf(" · attempt %d", h.attempt)
		}
		s += " · " + short(p.cfg.Now().Sub(h.ruleStart))
		if h.promptLimit > 0 {
			s += fmt.Sprintf(" · prompt %d/%d tokens", h.prompt, h.promptLimit)
		}
		return s
	case h.done >= h.total && h.total > 0:
		return s + fmt.Sprintf(" done (%d fixed or compliant, %d not)", h.fixed, h.failed)
	}
	return s + " waiting"
}

// draw rewrites the live block in place: back up to its first line, then
// each line cleared and written. The block never shrinks (lines no longer
// needed are blanked), so the cursor always ends on its last line.
func (p *Progress) draw() {
	ls := p.lines()
	for len(ls) < p.drawn {
		ls = append(ls, "")
	}
	var b strings.Builder
	if p.drawn > 1 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn-1)
	}
	for i, l := range ls {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("\r\x1b[2K")
		b.WriteString(l)
	}
	p.write(b.String())
	p.drawn = len(ls)
	p.lastDraw = p.cfg.Now()
}

// short writes a duration rounded to seconds, as "1h02m", "4m05s" or "12s".
func short(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int((d + time.Second/2) / time.Second)
	switch {
	case s >= 3600:
		return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
	case s >= 60:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%ds", s)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func pad(s string, w int) string {
	s = cut(s, w)
	return s + strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s)))
}

// cut shortens s to at most w runes, ending in "…" when cut.
func cut(s string, w int) string {
	switch {
	case w <= 0:
		return ""
	case utf8.RuneCountInString(s) <= w:
		return s
	}
	r := []rune(s)
	return string(r[:w-1]) + "…"
}
