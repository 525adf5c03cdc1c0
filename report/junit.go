package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/textcut"
)

// maxOutput caps each command's output in <system-out>.
const maxOutput = 4096

// maxMessage caps the message attribute of <failure> and <error>.
const maxMessage = 1024

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr,omitempty"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Hostname   string          `xml:"hostname,attr"`
	ID         int             `xml:"id,attr"`
	Properties *junitProps     `xml:"properties,omitempty"`
	Cases      []junitTestCase `xml:"testcase"`
}

type junitProps struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// The element order is the schema's: skipped, error, failure, system-out.
type junitTestCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Status    string        `xml:"status,attr"`
	Skipped   *string       `xml:"skipped"`
	Error     *junitProblem `xml:"error"`
	Failure   *junitProblem `xml:"failure"`
	SystemOut *junitText    `xml:"system-out"`
}

// junitText is element text written as CDATA, so that transcripts stay
// readable (encoding/xml splits any "]]>" in it).
type junitText struct {
	Text string `xml:",cdata"`
}

type junitProblem struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the run as JUnit XML: a <testsuite> per host (in order
// of first appearance), a <testcase> per rule × host named by the rule, with
// the host as classname. It rejects a run that fails Validate.
func WriteJUnit(w io.Writer, run *Run) error {
	if err := run.Validate(); err != nil {
		return err
	}
	doc := junitSuites{Name: xmlSafe(run.Name), Time: secondsAttr(seconds(run.Finished.Sub(run.Started)))}
	if doc.Name == "" {
		doc.Name = "nightshift"
	}
	suiteIndex := map[string]int{}
	for i, h := range hostsOf(run.Results) {
		suiteIndex[h] = i
		s := junitSuite{Name: xmlSafe(h), Hostname: xmlSafe(h), ID: i}
		if !run.Started.IsZero() {
			s.Timestamp = run.Started.UTC().Format("2006-01-02T15:04:05")
		}
		if run.Model != "" {
			s.Properties = &junitProps{Props: []junitProp{{Name: "model", Value: xmlSafe(run.Model)}}}
		}
		doc.Suites = append(doc.Suites, s)
	}
	suiteSeconds := make([]float64, len(doc.Suites))
	for _, r := range run.Results {
		i := suiteIndex[r.Host]
		s := &doc.Suites[i]
		d := seconds(r.Duration)
		suiteSeconds[i] += d
		c := junitTestCase{
			Name:      xmlSafe(r.Rule),
			Classname: xmlSafe(r.Host),
			Time:      secondsAttr(d),
			Status:    r.Outcome.String(),
			SystemOut: &junitText{xmlSafe(transcript(r))},
		}
		message := r.Outcome.String()
		if r.Reason != "" {
			message += ": " + r.Reason
		}
		message = xmlSafe(textcut.Head(message, maxMessage))
		problem := &junitProblem{Type: r.Outcome.String(), Message: message, Text: message}
		switch {
		case r.Outcome == nightshift.RuleNotApplicable:
			skipped := xmlSafe(textcut.Head("the rule does not apply to this host: "+r.Reason, maxMessage))
			c.Skipped = &skipped
			s.Skipped++
		case r.Outcome.IsFailure():
			c.Failure = problem
			s.Failures++
			doc.Failures++
		case r.Outcome.IsError():
			c.Error = problem
			s.Errors++
			doc.Errors++
		}
		s.Tests++
		doc.Tests++
		s.Cases = append(s.Cases, c)
	}
	for i := range doc.Suites {
		doc.Suites[i].Time = secondsAttr(suiteSeconds[i])
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
}

// transcript is a result's attempts and commands as plain text.
func transcript(r TaskResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s: %s", r.Rule, r.Host, r.Outcome)
	if r.Reason != "" {
		fmt.Fprintf(&b, " (%s)", r.Reason)
	}
	b.WriteByte('\n')
	if r.Fallback != "" {
		fmt.Fprintf(&b, "NO SANDBOX: %s\n", r.Fallback)
	}
	for _, a := range r.Attempts {
		if a.Number == 0 {
			b.WriteString("recipe replay (no model call)")
		} else {
			fmt.Fprintf(&b, "attempt %d: prompt %d of %d tokens", a.Number, a.PromptTokens, a.Limit)
		}
		if a.Check != "" {
			fmt.Fprintf(&b, ", check %s", a.Check)
		}
		b.WriteByte('\n')
		for _, c := range a.Commands {
			fmt.Fprintf(&b, "  $ %s\n    %s", c.Command, c.Action)
			if c.ExitCode != nil {
				fmt.Fprintf(&b, ", exit %d", *c.ExitCode)
			}
			if c.Check != "" {
				fmt.Fprintf(&b, ", check %s", c.Check)
			}
			if c.Detail != "" {
				fmt.Fprintf(&b, ", %s", c.Detail)
			}
			b.WriteByte('\n')
			if out := strings.TrimRight(c.Output, "\n"); out != "" {
				for _, line := range strings.Split(textcut.Head(out, maxOutput), "\n") {
					fmt.Fprintf(&b, "    | %s\n", line)
				}
			}
			if ev := c.Evidence; ev != nil {
				fmt.Fprintf(&b, "    sandbox: %s", ev.Verdict)
				for _, why := range ev.Reasons {
					fmt.Fprintf(&b, "; %s", why)
				}
				fmt.Fprintf(&b, "\n    effects: %s\n", ev.Effects.Summary(maxOutput))
			}
		}
	}
	return b.String()
}

// xmlSafe replaces what XML 1.0 cannot carry (control characters other than
// tab, newline and carriage return; invalid UTF-8; U+FFFE and U+FFFF) with
// U+FFFD, so that the document stays well-formed. encoding/xml escapes the
// rest.
func xmlSafe(s string) string {
	ok := true
	for _, r := range s {
		if !xmlChar(r) {
			ok = false
			break
		}
	}
	if ok && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s { // invalid UTF-8 decodes as U+FFFD
		if !xmlChar(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

func secondsAttr(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }
