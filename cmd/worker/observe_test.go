package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	_ "modernc.org/sqlite"

	"github.com/nightshift-dev/nightshift/vllmsim"
)

// promptLog is the simulator's policy wrapped so that every request's rule,
// attempt and pinned messages (the system message, shared by every rule,
// then the task message with the rule, its bans and lessons) are kept, in
// arrival order.
type promptLog struct {
	vllmsim.Policy
	mu   sync.Mutex
	reqs []prompt
}

type prompt struct {
	rule    string
	attempt int
	system  string
}

func (p *promptLog) Next(c vllmsim.Conversation) vllmsim.Generation {
	sys, task := "", ""
	for _, m := range c.Messages {
		if m.Role == openai.ChatMessageRoleSystem && sys == "" {
			sys = m.Content
		}
		if m.Role == openai.ChatMessageRoleUser && task == "" {
			task = m.Content
		}
	}
	sys += "\n" + task
	p.mu.Lock()
	p.reqs = append(p.reqs, prompt{c.RuleID, c.Attempt, sys})
	p.mu.Unlock()
	return p.Policy.Next(c)
}

func (p *promptLog) all() []prompt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]prompt(nil), p.reqs...)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunProgressLines: on stderr that is not a terminal, run writes one
// plain line per rule start and end and a summary; --no-progress writes
// none.
func TestRunProgressLines(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 2, 2)
	tests := []struct {
		name    string
		extra   []string
		want    []string
		notWant []string
	}{
		{"plain lines", nil, []string{
			"web1: 3 rules planned",
			"web2: 3 rules planned",
			"web1 sshd_root_login: started (rule 1 of 3)",
			"web1 sshd_root_login: fixed after 2 attempts in ",
			"web2 motd_banner: compliant in ",
			"web2 aide_db: not_fixed after 2 attempts in ",
			"6/6 rules · elapsed ",
		}, nil},
		{"--no-progress", []string{"--no-progress"}, nil, []string{"planned", "started (rule", "rules · elapsed"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := filepath.Join(f.dir, fmt.Sprintf("progress%d.db", i))
			code, out, errOut := cli(t, "", f.runArgs(j, append([]string{"--parallel-hosts", "1"}, tt.extra...)...)...)
			if code != exitNotFixed || !strings.Contains(out, "6 of 6 rules × hosts finished") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			line := regexp.MustCompile(`^\[\d\d:\d\d:\d\d\] `)
			lines := strings.Split(errOut, "\n")
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					if line.MatchString(l) && strings.Contains(l, w) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("no progress line with %q in stderr:\n%s", w, errOut)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(errOut, w) {
					t.Errorf("stderr has %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// TestRunMetricsAddr: --metrics-addr serves Prometheus metrics while the
// run lasts; scrapes during the run see attempts and rules counted, and the
// server is gone once the command returns.
func TestRunMetricsAddr(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 2, 20)
	j := filepath.Join(f.dir, "metrics.db")
	var stderr syncBuffer
	var stdout bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), f.runArgs(j, "--metrics-addr", "127.0.0.1:0", "--no-progress",
			"--parallel-hosts", "2", "--model-concurrency", "1"), strings.NewReader(""), &stdout, &stderr)
	}()
	addr := regexp.MustCompile(`serving metrics on (http://\S+/metrics)`)
	var url string
	var runErr error
	finished := false
	var scrapes []map[string]float64
	for !finished {
		select {
		case runErr = <-done:
			finished = true
			continue
		case <-time.After(5 * time.Millisecond):
		}
		if url == "" {
			if m := addr.FindStringSubmatch(stderr.String()); m != nil {
				url = m[1]
			}
			continue
		}
		if s, err := scrape(url); err == nil {
			scrapes = append(scrapes, s)
		}
	}
	if exitCode(runErr, io.Discard) != exitNotFixed || !strings.Contains(stdout.String(), "6 of 6 rules × hosts finished") {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", runErr, stdout.String(), stderr.String())
	}
	if url == "" {
		t.Fatalf("no metrics address on stderr:\n%s", stderr.String())
	}
	t.Logf("%d scrapes during the run", len(scrapes))
	if len(scrapes) == 0 {
		t.Fatal("no scrape succeeded while the run lasted")
	}
	last := scrapes[len(scrapes)-1]
	attempts := 0.0
	for k, v := range last {
		if strings.HasPrefix(k, "nightshift_attempts_total{") {
			attempts += v
		}
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"attempts counted", attempts > 0},
		{"prompt tokens observed", last["nightshift_prompt_tokens_count"] > 0},
		{"model calls timed", last[`nightshift_model_call_duration_seconds_count{result="ok"}`] > 0},
		{"host commands timed", last[`nightshift_host_command_duration_seconds_count{result="ok"}`] > 0},
		{"Go runtime collected", last["go_goroutines"] > 0},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: not in the last of %d scrapes: %v", c.name, len(scrapes), last)
		}
	}
	if _, err := scrape(url); err == nil {
		t.Error("the metrics server still answers after the run")
	}
}

// scrape reads the metrics at url as name{labels} → value.
func scrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// TestRunLessonsReachTheNextHost: when sshd_root_login ends on web1, its
// lessons are stored in the journal's file, and web2's prompt for the same
// rule carries what worked on web1; with --no-lessons neither. Recipes are
// off (--no-recipes): with them web2 would replay web1's fix and never ask
// the model (recipes.txtar shows that).
func TestRunLessonsReachTheNextHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		extra   []string
		lessons bool
	}{
		{"lessons", nil, true},
		{"--no-lessons", []string{"--no-lessons"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newBatchFixture(t, 2, 2)
			j := filepath.Join(f.dir, "lessons.db")
			code, out, errOut := cli(t, "", f.runArgs(j, append([]string{"--parallel-hosts", "1", "--no-progress", "--no-recipes"}, tt.extra...)...)...)
			if code != exitNotFixed || !strings.Contains(out, "6 of 6 rules × hosts finished") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			// One host at a time: web1's requests come first, then web2's.
			var firsts []string // the system message of each host's attempt 1 at sshd_root_login
			for _, p := range f.prompts.all() {
				if p.rule == "sshd_root_login" && p.attempt == 1 {
					firsts = append(firsts, p.system)
				}
			}
			if len(firsts) != 2 {
				t.Fatalf("%d first requests for sshd_root_login, want 2 (one per host)", len(firsts))
			}
			const heading = "Lessons from earlier attempts"
			if strings.Contains(firsts[0], heading) {
				t.Errorf("web1's first prompt has lessons before any rule ended:\n%s", firsts[0])
			}
			worked := "fixed in attempt 2: ran `set root_login no`"
			got := strings.Contains(firsts[1], heading) && strings.Contains(firsts[1], worked)
			if got != tt.lessons {
				t.Errorf("web2's prompt carries web1's lesson: %v, want %v:\n%s", got, tt.lessons, firsts[1])
			}

			db, err := sql.Open("sqlite", "file:"+j+"?mode=ro")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var n int
			err = db.QueryRow("SELECT count(*) FROM lessons WHERE rule = 'sshd_root_login' AND host = 'web1' AND kind = 'worked'").Scan(&n)
			switch {
			case tt.lessons && (err != nil || n != 1):
				t.Errorf("journal file: %d worked lessons of web1 for sshd_root_login (%v), want 1", n, err)
			case !tt.lessons && err == nil:
				t.Errorf("--no-lessons: the journal file has a lessons table (%d rows of web1)", n)
			}
		})
	}
}
