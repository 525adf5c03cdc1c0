package memory_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentExample is the program that shows the memory embedded in another
// agent; ./... does not reach it (a directory starting with "_"), so this
// test builds and runs it.
const agentExample = "../_examples/agent/main.go"

// TestAgentExample runs _examples/agent and checks what it prints: the
// simulator's model fixes the setting at its 9th attempt, every prompt (and
// the reserve) stays within the 2,016-token limit of its 2,048-token window,
// and the turns that outgrew it are the lines under the agent's own header,
// turns with the same command and result on one line. It also checks that
// the program stays within 25 lines of Nightshift-specific code: the imports
// of Nightshift's packages and the lines marked "// nightshift", with every
// line that names one of those packages marked.
func TestAgentExample(t *testing.T) {
	src, err := os.ReadFile(agentExample)
	require.NoError(t, err)
	names := regexp.MustCompile(`\b(served|memory|vllmsim|budget)\.`)
	specific := 0
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "//"):
		case strings.Contains(line, `"github.com/nightshift-dev/nightshift`), strings.HasSuffix(line, "// nightshift"):
			specific++
		case names.MatchString(line):
			t.Errorf("%s:%d uses Nightshift but is not marked // nightshift: %s", agentExample, n, line)
		}
	}
	assert.LessOrEqual(t, specific, 25, "Nightshift-specific lines")
	t.Logf("%d Nightshift-specific lines", specific)

	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command, to build the example")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "run", "./_examples/agent")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go run ./_examples/agent:\n%s", out)
	text := string(out)
	assert.Contains(t, text, "attempt 9: set root_login no (exit 0)")
	assert.Contains(t, text, "fixed in attempt 9; the model last saw:\nWhat the agent tried before:\n")
	assert.Contains(t, text, "[Turns 1, 3, 5: ran `show` — exit 0]")
	assert.Contains(t, text, "[Turns 2, 4, 6: ran `enable root_login` — exit 127: \"error: nothing was changed\"]")
	budget := regexp.MustCompile(`prompt and reserve (\d+) of (\d+) tokens`).FindAllStringSubmatch(text, -1)
	require.Len(t, budget, 9, "one line per attempt:\n%s", text)
	for _, m := range budget {
		total, _ := strconv.Atoi(m[1])
		limit, _ := strconv.Atoi(m[2])
		assert.LessOrEqual(t, total, limit, m[0])
		assert.Equal(t, 2016, limit, m[0])
	}
}
