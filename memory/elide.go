package memory

import (
	"fmt"
	"regexp"
	"strings"
)

// errorFragments are lower-case fragments one of which every line
// errorLine matches holds: lines without any skip the regular expression.
var errorFragments = []string{"error", "fail", "fatal", "denied", "refused", "cannot", "can't", "could not", "couldn't", "unable",
	"invalid", "not found", "no such", "missing", "timed out", "timeout", "killed", "abort", "panic", "bad", "unknown",
	"unrecognized", "permission", "lock", "e: ", "w: ", "dpkg: ", "sed: ", "aide: ", "sshd: "}

// IsErrorLine is the built-in classifier of Config.ErrorLine: it reports
// whether an output line names an error — an error word (error, failed,
// denied, not found, timed out, permission, lock…) or the message prefix
// of apt, dpkg, sed, aide or sshd.
func IsErrorLine(l string) bool {
	lower := strings.ToLower(l)
	for _, f := range errorFragments {
		if strings.Contains(lower, f) {
			return errorLine.MatchString(l)
		}
	}
	return false
}

// errorLine matches output lines that name an error (IsErrorLine).
var errorLine = regexp.MustCompile(`(?i)\b(error|errors|fail|failed|failure|fatal|denied|refused|cannot|can't|could not|couldn't|unable|invalid|not found|no such|missing|timed out|timeout|killed|abort|aborted|panic|bad|unknown|unrecognized|permission|locked|lock)\b|^E: |^W: |^dpkg: |^sed: |^aide: |^sshd: `)

// elide cuts text to about maxTokens tokens: it keeps the head and the tail
// and, from the middle, every line that names an error (each shortened to
// 240 bytes; a line equal to one already kept is elided), and marks each cut
// with "[… N lines, M tokens elided …]". Only when the middle's error lines
// alone would take more than maxTokens are the later ones elided too. count
// counts tokens; total is count(text); isErr tells error lines. The result
// depends only on its arguments.
func elide(text string, maxTokens, total int, count func(string) int, isErr func(string) bool) string {
	if total <= maxTokens {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	if len(lines) < 3 {
		// One huge line: cut by bytes, head and tail.
		return elideBytes(text, maxTokens, total, count)
	}
	// Estimate bytes per token from the whole text to pick lines cheaply.
	bpt := float64(len(text)) / float64(max(total, 1))
	budgetBytes := int(float64(maxTokens) * bpt)
	headBytes, tailBytes, errBytes := budgetBytes*2/5, budgetBytes*2/5, budgetBytes

	h, size := 0, 0
	for h < len(lines) && size+len(lines[h]) <= headBytes {
		size += len(lines[h])
		h++
	}
	t, size := len(lines), 0
	for t > h && size+len(lines[t-1]) <= tailBytes {
		size += len(lines[t-1])
		t--
	}
	if h == 0 && t == len(lines) {
		return elideBytes(text, maxTokens, total, count)
	}
	var kept []string
	var elided strings.Builder
	seen := map[string]bool{}
	n, size := 0, 0
	for _, l := range lines[h:t] {
		if size < errBytes && !seen[l] && isErr(l) {
			seen[l] = true
			if len(l) > 240 {
				l = validPrefix(l[:240]) + "…\n"
			}
			if n > 0 {
				kept = append(kept, marker(n, count(elided.String())))
				elided.Reset()
				n = 0
			}
			kept = append(kept, l)
			size += len(l)
			continue
		}
		elided.WriteString(l)
		n++
	}
	if n > 0 {
		kept = append(kept, marker(n, count(elided.String())))
	}
	return strings.Join(lines[:h], "") + strings.Join(kept, "") + strings.Join(lines[t:], "")
}

func marker(lines, tokens int) string {
	return fmt.Sprintf("[… %d lines, %d tokens elided …]\n", lines, tokens)
}

func elideBytes(text string, maxTokens, total int, count func(string) int) string {
	bpt := float64(len(text)) / float64(max(total, 1))
	keep := int(float64(maxTokens) * bpt * 0.4)
	if keep*2 >= len(text) {
		keep = len(text) / 4
	}
	head, tail := validPrefix(text[:keep]), validSuffix(text[len(text)-keep:])
	middle := text[len(head) : len(text)-len(tail)]
	return head + "\n" + fmt.Sprintf("[… %d bytes, %d tokens elided …]", len(middle), count(middle)) + "\n" + tail
}

// validPrefix drops a trailing partial UTF-8 sequence; validSuffix a leading one.
func validPrefix(s string) string {
	for i := 0; i < 4 && len(s) > 0; i++ {
		if strings.ToValidUTF8(s, "") == s {
			return s
		}
		s = s[:len(s)-1]
	}
	return s
}

func validSuffix(s string) string {
	for i := 0; i < 4 && len(s) > 0; i++ {
		if strings.ToValidUTF8(s, "") == s {
			return s
		}
		s = s[1:]
	}
	return s
}
