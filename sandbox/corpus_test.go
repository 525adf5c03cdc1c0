package sandbox_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/sshexec"
)

var (
	corpusRun  = flag.Bool("corpus", false, "run TestHostileCorpora, the hostile corpora through the sandbox (12 minutes; see its doc)")
	corpusPar  = flag.Int("corpus.par", 4, "hostile commands run concurrently by TestHostileCorpora")
	corpusOnly = flag.String("corpus.only", "", "run only the corpus of this name (banned, issue, fresh)")
	corpusDump = flag.String("corpus.evidence", "", "write each hostile command's evidence to this file, one JSON object a line")
)

// hostileCase is one line of a hostile corpus: testdata/safety/banned.jsonl
// (name, category, technique, command) or testdata/sandbox/*.jsonl (name,
// technique, command, harm).
type hostileCase struct {
	Name      string `json:"name"`
	Category  string `json:"category"`
	Technique string `json:"technique"`
	Command   string `json:"command"`
	Harm      string `json:"harm"`
}

func loadHostile(t *testing.T, path string) []hostileCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open corpus: %v", err)
	}
	defer f.Close()
	var out []hostileCase
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var c hostileCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		if c.Name == "" || c.Command == "" || seen[c.Name] {
			t.Fatalf("%s:%d: a case needs a unique name and a command: %+v", path, n, c)
		}
		seen[c.Name] = true
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return out
}

// leftOut says why a case is not run on the target ("" runs it). Fork
// bombs are left out: the target has no writable pids cgroup, so nothing
// bounds the number of processes a trial may start, and a fork bomb there
// starves this machine (shared with other work), not just the target.
func leftOut(c hostileCase) string {
	if c.Category == "fork-bomb" {
		return "fork bomb (no pids cgroup bounds a trial's processes on the target)"
	}
	return ""
}

// protectedTrees are the trees whose state the manifest records, and
// which no committed hostile command may touch.
var protectedTrees = []string{"/etc", "/usr/bin", "/usr/sbin", "/usr/lib", "/boot", "/root/.ssh", "/var/lib/dpkg/status"}

func underProtected(p string) bool {
	for _, t := range protectedTrees {
		if p == t || strings.HasPrefix(p, t+"/") {
			return true
		}
	}
	// usrmerge aliases, should a path ever be reported through them.
	for _, t := range []string{"/bin", "/sbin", "/lib", "/lib64"} {
		if p == t || strings.HasPrefix(p, t+"/") {
			return true
		}
	}
	return false
}

// manifestScript prints, gzipped and base64-encoded, every entry of the
// protected trees (type, mode, owner, size of non-directories, symlink
// target) and the sha256 of every regular file under /etc, /usr/bin,
// /usr/sbin, /boot, /root/.ssh and of /var/lib/dpkg/status. It runs on the
// target outside any sandbox: the test's own view, not the code under test.
const manifestScript = `set -o pipefail
{
find /etc /usr/bin /usr/sbin /usr/lib /boot /root/.ssh /var/lib/dpkg/status \( -type d -printf '%p\t%y\t%m\t%U\t%G\t-\t\n' \) -o -printf '%p\t%y\t%m\t%U\t%G\t%s\t%l\n'
find /etc /usr/bin /usr/sbin /boot /root/.ssh /var/lib/dpkg/status -type f -print0 | xargs -0 -r sha256sum
} | LC_ALL=C sort | gzip -c | base64 -w0`

func takeManifest(t *testing.T, c *sshexec.Client) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ex, err := c.Run(ctx, manifestScript)
	if err != nil || ex.ExitCode != 0 || ex.StdoutCut > 0 {
		t.Fatalf("manifest: %v exit %d cut %d: %s", err, ex.ExitCode, ex.StdoutCut, ex.Stderr)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(ex.Stdout))
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		// "PATH\tTYPE..." for an entry, "HASH  PATH" for a content hash.
		if p, rest, ok := strings.Cut(line, "\t"); ok {
			m["entry "+p] = rest
		} else if h, p, ok := strings.Cut(line, "  "); ok {
			m["sha256 "+p] = h
		} else {
			t.Fatalf("manifest line %q", line)
		}
	}
	for _, need := range []string{"entry /etc/shadow", "sha256 /etc/shadow", "entry /usr/sbin/sshd", "entry /var/lib/dpkg/status", "sha256 /var/lib/dpkg/status"} {
		if _, ok := m[need]; !ok {
			t.Fatalf("manifest lacks %q (%d lines)", need, len(m))
		}
	}
	return m
}

func diffManifest(before, after map[string]string) []string {
	var out []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			out = append(out, "gone: "+k+" "+v)
		} else if w != v {
			out = append(out, "changed: "+k+" "+v+" -> "+w)
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			out = append(out, "new: "+k+" "+v)
		}
	}
	sort.Strings(out)
	return out
}

// freshLogin opens a new SSH connection to the target and runs a command.
func freshLogin(h *target) error {
	cfg := h.tg.SSHConfig()
	cfg.CommandTimeout = 30 * time.Second
	c, err := sshexec.New(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ex, err := c.Run(ctx, "id -u && test -x /usr/bin/bash")
	if err != nil {
		return err
	}
	if ex.ExitCode != 0 || strings.TrimSpace(ex.Stdout) != "0" {
		return fmt.Errorf("exit %d, stdout %q, stderr %q", ex.ExitCode, ex.Stdout, ex.Stderr)
	}
	return nil
}

type corpusCount struct {
	total, leftOut, committed, committedEffects, refused, conflict, discarded int
}

// TestHostileCorpora is the first proof of issue 19: hostile commands run
// through the recording sandbox on a disposable Debian 12 target, judged
// by their effects alone (no static pre-filter). No committed command may
// touch the protected trees, the manifest of those trees must be the same
// after the run as before it, and a fresh SSH login must work after every
// 50 commands and at the end.
//
// It runs only with -corpus (docs/sandbox-corpus.md has the command and
// the last figures): it takes 12 minutes at 4 commands at a time, and the
// actions its judge approves run for real on the target, which shares this
// machine's kernel (a swapoff or sysctl there is this machine's). It does
// not pass yet: some harmful effects are still committed (listed in
// docs/sandbox-corpus.md), so issue 19 stays open.
func TestHostileCorpora(t *testing.T) {
	if !*corpusRun {
		t.Skip("the hostile corpora are a proof run: go test ./sandbox -run TestHostileCorpora -corpus (see docs/sandbox-corpus.md)")
	}
	h := debian(t)
	corpora := []struct{ name, path string }{
		{"banned", "../testdata/safety/banned.jsonl"},
		{"issue", "../testdata/sandbox/hostile-issue.jsonl"},
		{"fresh", "../testdata/sandbox/hostile-fresh.jsonl"},
	}
	type job struct {
		corpus string
		c      hostileCase
	}
	var jobs []job
	counts := map[string]*corpusCount{}
	leftWhy := map[string]int{}
	for _, cp := range corpora {
		if *corpusOnly != "" && *corpusOnly != cp.name {
			continue
		}
		cases := loadHostile(t, filepath.FromSlash(cp.path))
		cnt := &corpusCount{total: len(cases)}
		counts[cp.name] = cnt
		for _, c := range cases {
			if why := leftOut(c); why != "" {
				cnt.leftOut++
				leftWhy[why]++
				continue
			}
			jobs = append(jobs, job{cp.name, c})
		}
	}
	if len(jobs) == 0 {
		t.Fatalf("no hostile case to run (-corpus.only=%q)", *corpusOnly)
	}

	// The sandbox's own connection, separate from the test's view.
	cfg := h.tg.SSHConfig()
	cfg.CommandTimeout = 3 * time.Minute
	sc, err := sshexec.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	sb := sandbox.New(sc, sandbox.Config{Timeout: 15 * time.Second, LayerSize: 256 << 20, OutputCap: 16 << 10})
	r := sandbox.NewRunner(sb, safety.EffectsPolicy{Login: "root", SSHPort: h.tg.Port}, sandbox.RunnerConfig{})

	// The target's control sshd reads /etc/nightshift/authorized_keys; root
	// gets the usual ~/.ssh/authorized_keys too, so that the corpora's
	// commands against it have something to destroy.
	h.host(t, "mkdir -p -m 700 /root/.ssh && cp /etc/nightshift/authorized_keys /root/.ssh/authorized_keys && chmod 600 /root/.ssh/authorized_keys")
	start := time.Now()
	before := takeManifest(t, h.c)
	t.Logf("manifest before: %d lines", len(before))

	var mu sync.Mutex
	var committedWithEffects []string
	var dump *json.Encoder
	if *corpusDump != "" {
		f, err := os.Create(*corpusDump)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		dump = json.NewEncoder(f)
	}
	par := max(*corpusPar, 1)
	for lo := 0; lo < len(jobs); lo += 50 {
		chunk := jobs[lo:min(lo+50, len(jobs))]
		var wg sync.WaitGroup
		next := make(chan job)
		for range par {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range next {
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
					ex, err := r.Run(ctx, j.c.Command)
					cancel()
					mu.Lock()
					if dump != nil {
						_ = dump.Encode(map[string]any{"corpus": j.corpus, "name": j.c.Name, "command": j.c.Command, "exec": ex, "err": fmt.Sprint(err)})
					}
					cnt := counts[j.corpus]
					switch {
					case err != nil:
						t.Errorf("%s/%s: the runner failed (outcome unknown): %v", j.corpus, j.c.Name, err)
					case ex.Evidence == nil:
						t.Errorf("%s/%s: no evidence", j.corpus, j.c.Name)
					default:
						ev := ex.Evidence
						switch ev.Verdict {
						case nightshift.VerdictCommitted:
							cnt.committed++
							if len(ev.Effects.Changes) > 0 || len(ev.Effects.Actions) > 0 {
								cnt.committedEffects++
								committedWithEffects = append(committedWithEffects, fmt.Sprintf("%s/%s: %s", j.corpus, j.c.Name, ev.Effects.Summary(400)))
							}
							for _, ch := range ev.Effects.Changes {
								if underProtected(ch.Path) {
									t.Errorf("HARM COMMITTED %s/%s (%s): %s %s\ncommand: %s\nharm: %s",
										j.corpus, j.c.Name, j.c.Technique, ch.Change, ch.Path, j.c.Command, j.c.Harm)
								}
							}
							for _, a := range ev.Effects.Actions {
								if a.Exit != nil {
									t.Logf("committed action ran: %s/%s: %s (exit %d)", j.corpus, j.c.Name, a, *a.Exit)
								}
							}
						case nightshift.VerdictRefused:
							cnt.refused++
						case nightshift.VerdictConflict:
							cnt.conflict++
						case nightshift.VerdictDiscarded:
							cnt.discarded++
						case nightshift.VerdictNone, nightshift.VerdictRolledBack:
							t.Errorf("%s/%s: unexpected verdict %s", j.corpus, j.c.Name, ev.Verdict)
						default:
							t.Errorf("%s/%s: unknown verdict %d", j.corpus, j.c.Name, ev.Verdict)
						}
					}
					mu.Unlock()
				}
			}()
		}
		for _, j := range chunk {
			next <- j
		}
		close(next)
		wg.Wait()
		t.Logf("%d/%d commands run, %s", lo+len(chunk), len(jobs), time.Since(start).Round(time.Second))
		if err := freshLogin(h); err != nil {
			t.Fatalf("after %d commands the target refuses a fresh SSH login: %v", lo+len(chunk), err)
		}
	}
	after := takeManifest(t, h.c)
	if d := diffManifest(before, after); len(d) > 0 {
		t.Errorf("the protected trees changed (%d differences):\n%s", len(d), strings.Join(d[:min(len(d), 100)], "\n"))
	} else {
		t.Logf("manifest after: %d lines, equal to before", len(after))
	}
	if err := freshLogin(h); err != nil {
		t.Errorf("at the end the target refuses a fresh SSH login: %v", err)
	}
	sort.Strings(committedWithEffects)
	for _, s := range committedWithEffects {
		t.Logf("committed with effects: %s", s)
	}
	var tab strings.Builder
	fmt.Fprintf(&tab, "| corpus | cases | left out | committed (with effects) | refused | conflict | discarded |\n|---|---|---|---|---|---|---|\n")
	for _, cp := range corpora {
		c, ok := counts[cp.name]
		if !ok {
			continue
		}
		fmt.Fprintf(&tab, "| %s | %d | %d | %d (%d) | %d | %d | %d |\n", cp.name, c.total, c.leftOut, c.committed, c.committedEffects, c.refused, c.conflict, c.discarded)
	}
	for why, n := range leftWhy {
		fmt.Fprintf(&tab, "left out: %d × %s\n", n, why)
	}
	fmt.Fprintf(&tab, "wall time %s, %d commands, %d at a time\n", time.Since(start).Round(time.Second), len(jobs), par)
	t.Logf("\n%s", tab.String())
}
