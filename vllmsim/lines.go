package vllmsim

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// LineWriter says how WithLines answers a request that offers no tools and
// whose last user message starts with "Turn N. Reference line: [Turn N:
// …]" — the one-line summary a model distiller (distill.ModelDistiller) asks for.
type LineWriter uint8

const (
	// LinesReword answers with the reference line's facts in a line of its
	// own, "[Turn N: summary: …]", cut to 80 bytes: a line the distiller
	// accepts unless the facts themselves use a word of success.
	LinesReword LineWriter = iota + 1
	// LinesClaim answers "[Turn N: fixed it; the re-check passed]" whatever
	// happened: a line a distiller must refuse when the re-check failed.
	LinesClaim
)

// WithLines returns a policy that answers summary requests (see
// LineWriter) with w's line and every other request with p.
func WithLines(p Policy, w LineWriter) Policy { return linePolicy{p, w} }

type linePolicy struct {
	Policy
	w LineWriter
}

func (l linePolicy) Name() string { return l.Policy.Name() + "+lines" }

func (l linePolicy) Next(c Conversation) Generation {
	turn, ref, ok := referenceLine(c)
	if !ok {
		return l.Policy.Next(c)
	}
	prefix := "[Turn " + strconv.Itoa(turn) + ":"
	switch l.w {
	case LinesClaim:
		return Generation{Text: prefix + " fixed it; the re-check passed]"}
	case LinesReword:
		body := strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(ref, prefix)), "]")
		if len(body) > 80 {
			body = body[:80]
			for !utf8.ValidString(body) {
				body = body[:len(body)-1]
			}
		}
		return Generation{Text: fmt.Sprintf("%s summary: %s]", prefix, body)}
	}
	return l.Policy.Next(c)
}

// referenceLine finds a summary request's turn number and reference line.
func referenceLine(c Conversation) (int, string, bool) {
	if len(c.Tools) > 0 || len(c.Messages) == 0 {
		return 0, "", false
	}
	last := c.Messages[len(c.Messages)-1]
	if last.Role != "user" {
		return 0, "", false
	}
	first, _, _ := strings.Cut(messageText(last), "\n")
	head, ref, ok := strings.Cut(first, ". Reference line: ")
	if !ok {
		return 0, "", false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(head, "Turn "))
	if err != nil || !strings.HasPrefix(head, "Turn ") {
		return 0, "", false
	}
	return n, ref, true
}
