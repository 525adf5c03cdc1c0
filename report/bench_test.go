package report

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
)

// nightRun is a simulated night: rules × hosts results with a few attempts
// each, every attempt with one command and some output.
func nightRun(rules, hosts int) *Run {
	start := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	run := &Run{Name: "night", Model: "Qwen/Qwen3-8B", Started: start, Finished: start.Add(7 * time.Hour)}
	outs := nightshift.RuleStatuses()
	for r := 0; r < rules; r++ {
		for h := 0; h < hosts; h++ {
			res := TaskResult{
				Rule: fmt.Sprintf("rule_%03d", r), Title: fmt.Sprintf("Rule number %d", r),
				Host: fmt.Sprintf("host%02d.example.com", h), Outcome: outs[(r+h)%len(outs)],
				Reason: "the check still fails", Duration: time.Duration(r+h) * time.Second,
			}
			exit := (r + h) % 3
			for a := 1; a <= (r+h)%5; a++ {
				res.Attempts = append(res.Attempts, Attempt{
					Number: a, PromptTokens: 3000 + 2000*a, Limit: 14336, Check: "fail",
					Commands: []Command{{Command: fmt.Sprintf("sed -i 's/^X%d/Y/' /etc/ssh/sshd_config", a), Action: "ran", ExitCode: &exit, Check: "fail", Output: "line one\nline two\n"}},
				})
			}
			run.Results = append(run.Results, res)
		}
	}
	return run
}

// countingWriter counts the bytes written.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func BenchmarkWrite(b *testing.B) {
	run := nightRun(200, 50)
	for _, bc := range []struct {
		name  string
		write func(io.Writer, *Run) error
	}{{"JSON", WriteJSON}, {"JUnit", WriteJUnit}, {"HTML", WriteHTML}} {
		b.Run(bc.name+"/200rules×50hosts", func(b *testing.B) {
			b.ReportAllocs()
			var size int64
			for b.Loop() {
				w := &countingWriter{}
				if err := bc.write(w, run); err != nil {
					b.Fatal(err)
				}
				size = w.n
			}
			b.ReportMetric(float64(size)/1e6, "MB/report")
		})
	}
}
