package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeStandIns are what the README's commands name that a test cannot
// reach, and what the scripts in testdata/script use instead.
var readmeStandIns = []struct{ readme, script string }{
	{"db1.example.com", "$DB1"},                             // a simulated host (simhosts db1)
	{"http://gpu1:8000/v1", "$GPU1"},                        // the vLLM simulator (faultserver GPU1 …)
	{"temporal:7233", "$TEMPORAL"},                          // a Temporal dev server (temporal TEMPORAL)
	{"/var/log/dpkg.log", "dpkg.log"},                       // a dpkg log in the script's archive
	{"go run ./cmd/worker", "worker"},                       // the test binary is the worker command
	{"scripts/fleet-dev.sh", "$REPO/scripts/fleet-dev.sh"},  // the script from the module root
	{"./Llama-3.1-8B/tokenizer.json", "$LLAMA31_TOKENIZER"}, // scripts/fetch-tokenizers.sh's copy
}

// readmeExtraFlags may follow a README command in a script: what the test's
// environment needs and the README leaves to the user's defaults.
var readmeExtraFlags = []string{
	"--sandbox off",             // simulated hosts have no sandbox
	"--identity id_ed25519",     // the README relies on ~/.ssh/id_*
	"--known-hosts known_hosts", // and on ~/.ssh/known_hosts
}

// readmeNotRun are the README's commands no script runs, each with the
// reason. TestREADMECommands fails when one is no longer in the README.
var readmeNotRun = map[string]string{
	"make test": "the whole test command; CI runs it (.ci/run)",
	"vllm serve Qwen/Qwen3-8B --max-model-len 16384 --enable-auto-tool-choice --tool-call-parser hermes": "a real vLLM server needs a GPU; the scripts use the vLLM simulator",
	"export OPENAI_API_KEY=…": "a placeholder for the user's key",
	"worker --datastream /usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml --profile xccdf_org.ssgproject.content_profile_anssi_bp28_high --rule sshd_disable_root_login --rule accounts_tmout --host root@db1.example.com": "needs a host with the SSG datastream and OpenSCAP (internal/debtarget); TestSCAPDatastreamEndToEnd runs these flags",
	"worker run --datastream /usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml --profile anssi_bp28_high --inventory hosts.yaml --journal night.db --html night.html --metrics-addr :9464":                                  "needs hosts with the SSG datastream and OpenSCAP (internal/debtarget); TestSCAPDatastreamEndToEnd runs a datastream night",
	"worker fleet start --temporal temporal:7233 --datastream /usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml --profile anssi_bp28_high --inventory hosts.yaml --id tonight --base-url http://gpu1:8000/v1":               "needs hosts with the SSG datastream and OpenSCAP (internal/debtarget)",
	"useradd --create-home --shell /bin/bash nightshift":                                                            "provisions a login on the user's host, as root",
	"install -d -m 0700 -o nightshift -g nightshift ~nightshift/.ssh":                                               "provisions a login on the user's host, as root",
	"install -m 0600 -o nightshift -g nightshift worker_key.pub ~nightshift/.ssh/authorized_keys":                   "provisions a login on the user's host, as root",
	"echo 'nightshift ALL=(ALL) NOPASSWD: ALL' > /etc/sudoers.d/nightshift && chmod 0440 /etc/sudoers.d/nightshift": "provisions a login on the user's host, as root",
	"visudo -cf /etc/sudoers.d/nightshift":                                                                          "provisions a login on the user's host, as root",
	`CGO_LDFLAGS="-L/path/to/dir/with/libtokenizers.a" go build -tags hf_native ./...`:                              "needs the Rust library libtokenizers.a, which CI cannot build",
}

// TestREADMECommands: every command in the README's sh blocks is run, as
// written there, by a script in testdata/script (TestScripts), up to the
// stand-ins and extra flags above, or is listed in readmeNotRun with the
// reason. A README command that changes without its script, or a script
// line that changes without the README, fails here.
func TestREADMECommands(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(string(readme))
	if len(cmds) < 20 {
		t.Fatalf("found only %d commands in the README's sh blocks", len(cmds))
	}
	scripts, err := filepath.Glob(filepath.Join("testdata", "script", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	run := map[string][]string{} // normalized command → scripts
	for _, f := range scripts {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range scriptCommands(string(b)) {
			run[c] = append(run[c], filepath.Base(f))
		}
	}
	for _, c := range cmds {
		if _, ok := readmeNotRun[c]; ok {
			continue
		}
		want := c
		for _, s := range readmeStandIns {
			want = strings.ReplaceAll(want, s.readme, s.script)
		}
		if _, ok := run[want]; !ok {
			t.Errorf("the README's command\n\t%s\nis run by no script in testdata/script (as\n\t%s\nwith at most %q added) and is not in readmeNotRun", c, want, readmeExtraFlags)
		}
	}
	for c := range readmeNotRun {
		if !slices.Contains(cmds, c) {
			t.Errorf("readmeNotRun lists a command the README no longer has:\n\t%s", c)
		}
	}
}

// readmeCommands returns the commands of the README's ```sh blocks: lines
// joined at a trailing backslash, comments and blank lines dropped, spaces
// collapsed.
func readmeCommands(md string) []string {
	var cmds []string
	in := false
	var cur string
	for _, l := range strings.Split(md, "\n") {
		switch {
		case !in && strings.TrimSpace(l) == "```sh":
			in = true
			continue
		case in && strings.TrimSpace(l) == "```":
			in = false
			continue
		case !in:
			continue
		}
		if s, ok := strings.CutSuffix(strings.TrimRight(l, " "), `\`); ok {
			cur += s + " "
			continue
		}
		c := normalizeCommand(stripComment(cur + l))
		cur = ""
		if c != "" {
			cmds = append(cmds, c)
		}
	}
	return cmds
}

var scriptExec = regexp.MustCompile(`^(?:\[[^\]]+\] +)*(?:! +)?(?:exec|status +\d+|eventually +\S+) +(.*)$`)

// scriptCommands returns the commands a testscript runs (exec, status and eventually
// lines, with their conditions and negation dropped), as a README would
// write them: a preceding stdin FILE becomes "< FILE", bash -c 'SCRIPT'
// becomes SCRIPT, a trailing & is dropped and so are readmeExtraFlags.
func scriptCommands(txtar string) []string {
	var cmds []string
	stdin := ""
	for _, l := range strings.Split(txtar, "\n") {
		if strings.HasPrefix(l, "-- ") {
			break
		}
		l = strings.TrimSpace(stripComment(l))
		if m := regexp.MustCompile(`^(?:\[[^\]]+\] +)*stdin +(\S+)$`).FindStringSubmatch(l); m != nil {
			stdin = m[1]
			continue
		}
		m := scriptExec.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		c := strings.TrimSuffix(strings.TrimSpace(m[1]), " &")
		if s, ok := strings.CutPrefix(c, "bash -c '"); ok && strings.HasSuffix(s, "'") {
			c = strings.ReplaceAll(strings.TrimSuffix(s, "'"), "''", "'")
		}
		c = normalizeCommand(c)
		for _, f := range readmeExtraFlags {
			c = strings.ReplaceAll(c, " "+f, "")
		}
		if stdin != "" {
			c += " < " + stdin
			stdin = ""
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// stripComment drops a shell comment: from a # that starts a word outside
// quotes to the end of the line.
func stripComment(l string) string {
	var q rune
	prev := ' '
	for i, r := range l {
		switch {
		case q != 0:
			if r == q {
				q = 0
			}
		case r == '\'' || r == '"':
			q = r
		case r == '#' && (prev == ' ' || prev == '\t'):
			return l[:i]
		}
		prev = r
	}
	return l
}

func normalizeCommand(c string) string { return strings.Join(strings.Fields(c), " ") }

// TestREADMECommandsParsing: the extraction the check relies on.
func TestREADMECommandsParsing(t *testing.T) {
	md := "text\n```sh\n# comment\nworker run --a b \\\n    --c 'd # e'   # why\n\necho 'x' | go run ./cmd/worker tokens\n```\n```\nnot sh\n```\n"
	got := readmeCommands(md)
	want := []string{"worker run --a b --c 'd # e'", "echo 'x' | go run ./cmd/worker tokens"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("readmeCommands = %q, want %q", got, want)
	}
	script := "stdin in.json\nexec worker tokens --chat\n[llama31] ! exec worker x --sandbox off &\nstatus 1 bash -c 'echo ''a b'' | worker check-command'\nstdout x\n-- in.json --\nexec no\n"
	got = scriptCommands(script)
	want = []string{"worker tokens --chat < in.json", "worker x", "echo 'a b' | worker check-command"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scriptCommands = %q, want %q", got, want)
	}
}
