package worker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/lessons"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// lessonWorker is e.worker with lessons and extra observers.
func (e *env) lessonWorker(src worker.LessonSource, pct int, obs ...nightshift.Observer) *worker.Worker {
	e.t.Helper()
	oc := openai.DefaultConfig("")
	oc.BaseURL = e.url + "/v1"
	w, err := worker.New(worker.Config{
		Chat: openai.NewClientWithConfig(oc), Model: qwen3(e.t).With(e.sim.Model(), nil), Target: e.ssh,
		Observer: fanout(append([]nightshift.Observer{e}, obs...)),
		Lessons:  src, InstructionPercent: pct,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

type fanout []nightshift.Observer

func (f fanout) Observe(ev nightshift.Event) {
	for _, o := range f {
		o.Observe(ev)
	}
}

// lessonFollower proposes the fix a "worked" lesson in the instruction names
// at once; without one it behaves as the eventual policy (fix at attempt 3).
type lessonFollower struct {
	fix   string
	inner vllmsim.Policy
}

func (lessonFollower) Name() string { return "lesson-follower" }

func (p lessonFollower) Next(c vllmsim.Conversation) vllmsim.Generation {
	if len(c.Messages) > 0 {
		for _, line := range strings.Split(c.Messages[min(1, len(c.Messages)-1)].Content, "\n") {
			if strings.HasPrefix(line, "- worked") && strings.Contains(line, p.fix) {
				return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(p.fix, "a lesson says this worked")}}
			}
		}
	}
	return p.inner.Next(c)
}

// TestLessonsReachTheNextHost: the lessons a rule's end on one host records
// are in the instruction of the same rule's next run, and a model that reads
// them fixes the rule in one attempt instead of three.
func TestLessonsReachTheNextHost(t *testing.T) {
	t.Parallel()
	var fix string
	e := newEnv(t, envOptions{policy: func(dir string) vllmsim.Policy {
		fix = "touch " + filepath.Join(dir, "fixed")
		return lessonFollower{fix: fix, inner: vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 3, DefaultFix: fix})}
	}})
	r := e.rule(fmt.Sprintf(`rules:
  - id: aide_build_database
    title: Build and Test AIDE Database
    check: "test -f %s/fixed"
`, e.dir), "aide_build_database")
	store := lessons.NewMemoryStore(lessons.MemoryStoreConfig{})
	rec, err := lessons.NewRecorder(lessons.RecorderConfig{Store: store, Host: "host-1", Counter: qwen3(t).Tokenizer()})
	if err != nil {
		t.Fatal(err)
	}
	src := lessons.NewSource(store, lessons.SourceConfig{})
	ctx := context.Background()

	first, err := e.lessonWorker(src, 0, rec).Fix(ctx, r)
	if err != nil || first.Status != nightshift.RuleFixed || first.Attempts != 3 {
		t.Fatalf("first host: %+v, %v; want fixed in 3 attempts", first, err)
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(e.dir, "fixed")); err != nil {
		t.Fatal(err)
	}
	n := len(e.requests())
	second, err := e.lessonWorker(src, 0).Fix(ctx, r)
	if err != nil || second.Status != nightshift.RuleFixed {
		t.Fatalf("second host: %+v, %v", second, err)
	}
	sys := e.requests()[n].Messages[1].Content
	if !contains(sys, "Lessons from earlier attempts", "- worked on ", "fixed in attempt 3: ran `"+fix+"` — exit 0; re-check passed", "- failed on ") {
		t.Fatalf("the lessons are not in the second host's instruction:\n%s", sys)
	}
	t.Logf("attempts: %d without lessons, %d with them", first.Attempts, second.Attempts)
	if second.Attempts != 1 {
		t.Fatalf("second host took %d attempts with the lesson, want 1", second.Attempts)
	}
}

type failingSource struct{}

func (failingSource) Lessons(context.Context, string, nightshift.HostFacts) ([]string, error) {
	return nil, errors.New("lessons store unavailable")
}

type fixedSource []string

func (s fixedSource) Lessons(context.Context, string, nightshift.HostFacts) ([]string, error) {
	return s, nil
}

// TestLessonsWithinTheInstructionShare: with more lessons than fit, the
// instruction holds the most relevant ones, whole and in order, up to the
// last that fits in its share counted with the Qwen3 tokenizer, and not one
// more.
func TestLessonsWithinTheInstructionShare(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{policy: func(string) vllmsim.Policy { return vllmsim.Script() }})
	r := e.rule(fmt.Sprintf(`rules:
  - id: sshd_disable_root_login
    title: Disable SSH root login
    description: The root user should never be allowed to log in to a system directly over a network.
    check: "test -f %s/never"
`, e.dir), "sshd_disable_root_login")
	var many fixedSource
	for i := 0; i < 400; i++ {
		many = append(many, fmt.Sprintf("failed on Debian GNU/Linux 12 (bookworm), apt-get: ran `sed -i s/^#*PermitRootLogin.*/PermitRootLogin no/ /etc/ssh/sshd_config.d/%03d.conf` — exit 4: sed expression error; re-check failed", i))
	}
	tok := qwen3(t).Tokenizer()
	limit := 16384 - 1024 - budget.DefaultMargin
	cases := []struct {
		name    string
		src     worker.LessonSource
		pct     int
		minShow int // lessons expected at least
		all     bool
	}{
		{"many lessons, default share", many, 0, 10, false},
		{"many lessons, 10% share", many, 10, 1, false},
		{"two lessons fit whole", many[:2], 0, 2, true},
		{"share too small for any", many, 4, 0, false},
		{"failing source", failingSource{}, 0, 0, true},
		{"no source", nil, 0, 0, true},
	}
	base, err := e.lessonWorker(nil, 4).Plan(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := e.lessonWorker(c.src, c.pct).Plan(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			pct := c.pct
			if pct == 0 {
				pct = worker.DefaultInstructionPct
			}
			share := limit * pct / 100
			got := tok.Count(p.Instruction)
			if got > share {
				t.Fatalf("instruction of %d tokens over its share of %d", got, share)
			}
			shown := strings.Count(p.Instruction, "\n- failed on ")
			for i := 0; i < shown; i++ {
				if !strings.Contains(p.Instruction, "\n- "+many[i]+"\n") {
					t.Fatalf("lesson %d is not whole in the instruction", i)
				}
			}
			t.Logf("%d of %d lessons in %d tokens (share %d)", shown, lenOf(c.src), got, share)
			if shown < c.minShow || (c.all && shown != lenOf(c.src)) {
				t.Fatalf("%d lessons shown, want at least %d (all: %v)", shown, c.minShow, c.all)
			}
			if shown == 0 && c.pct == 4 && p.Instruction != base.Instruction {
				t.Fatalf("without room for a lesson the instruction changed")
			}
			if s, ok := c.src.(fixedSource); ok && shown < len(s) {
				next := p.Instruction
				if shown == 0 {
					next += "\nLessons from earlier attempts at this rule on other hosts and in earlier runs, most relevant first " +
						"(repeat what worked where it applies; do not repeat what failed):\n"
				}
				next += "- " + s[shown] + "\n"
				if n := tok.Count(next); n <= share {
					t.Fatalf("lesson %d would have fitted (%d tokens of %d)", shown, n, share)
				}
			}
		})
	}
}

func lenOf(s worker.LessonSource) int {
	if f, ok := s.(fixedSource); ok {
		return len(f)
	}
	return 0
}

// TestEventsCarryClassesAndFacts: the command event names the error classes
// found in the command's output, and the rule's end carries the host facts —
// what package lessons builds its lines from.
func TestEventsCarryClassesAndFacts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{policy: func(string) vllmsim.Policy {
		return vllmsim.Script(vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply("sed -e 's/PermitRootLogin' /dev/null", "")}})
	}})
	r := e.rule(fmt.Sprintf(`rules:
  - id: sshd_disable_root_login
    title: Disable SSH root login
    check: "test -f %s/never"
`, e.dir), "sshd_disable_root_login")
	if _, err := e.worker(workerOptions{maxAttempts: 1}).Fix(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	cmds := e.eventsOf(nightshift.EventCommand)
	if len(cmds) != 1 || cmds[0].Action != nightshift.ActionRan || !slices.Contains(cmds[0].Classes, "sed expression error") {
		t.Fatalf("command events %+v, want one that ran with class %q", cmds, "sed expression error")
	}
	ends := e.eventsOf(nightshift.EventRuleEnd)
	if len(ends) != 1 || ends[0].Facts == nil || ends[0].Facts.OS == "" || ends[0].Facts.PackageManager == "" {
		t.Fatalf("rule end without host facts: %+v", ends)
	}
	t.Logf("classes %v; facts %+v", cmds[0].Classes, *ends[0].Facts)
}
