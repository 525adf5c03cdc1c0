package fleet_test

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	tlog "go.temporal.io/sdk/log"

	"github.com/nightshift-dev/nightshift/fleet"
)

// The histories under testdata/replay were recorded from a real Temporal
// dev server by cmd/worker's TestFleetIntegration (a night of 10 rules × 6
// hosts on two zones, one worker process killed with SIGKILL mid-run) with
// NIGHTSHIFT_RECORD_FLEET_HISTORY=1. Replaying them with today's code fails
// when a change to the workflows would break the nights running when it is
// deployed: such a change needs workflow.GetVersion, and the old histories
// stay here. can@run1, can@run2 and can%2Fh02 were recorded by
// TestNightContinuesAsNewOnServer (version night-waves: a night of 3 hosts,
// 2 a run, that continued as new once, and one of its hosts).
// rcp-recipes@run1, @run2 and rcp-recipes%2Fh04 were recorded by
// TestNightReplaysRecipesOnServer (versions night-recipes and host-recipes:
// a night whose later hosts replayed recipes, one demoted, across a
// continue-as-new, and a host that replayed one). bk-n1@run1, @run2,
// bk-n3@run1, @run2 and book-nights@run1 were recorded by
// TestRecipeBookAcrossNightsOnServer (version night-book: nights that read
// the fleet's recipe book, published their hosts' changes to it and carried
// it across a continue-as-new, the third after an operator retired and
// pinned recipes; and the book's first run, which continued as new after 3
// changes).
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "replay", "*.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 6 {
		t.Fatalf("want recorded histories of a night and a host in testdata/replay, found %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			wf := &fleet.Workflows{}
			if err := wf.Preload("qwen3"); err != nil {
				t.Fatal(err)
			}
			h := readHistory(t, f)
			// NAME@runN is run N of workflow NAME (a night that continued as new).
			name, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".json.gz"), "@")
			id, err := url.PathUnescape(name)
			if err != nil {
				t.Fatal(err)
			}
			logger := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err := fleet.Replay(wf, id, h, logger); err != nil {
				t.Fatalf("replay of %s: %v", f, err)
			}
		})
	}
}

func readHistory(t *testing.T, path string) *historypb.History {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	h, err := client.HistoryFromJSON(zr, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return h
}

// A night started before workflow version night-waves replays on the path
// it started on, whatever its input says: the recorded night of 4 hosts,
// its input edited to ask for one host per run, still starts all four in
// one run when replayed. Without the version check the code would stop
// after one host and continue as new, and replay would fail.
func TestReplayOldNightIgnoresWaves(t *testing.T) {
	h := readHistory(t, filepath.Join("testdata", "replay", "itest.json.gz"))
	in := h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0]
	var n map[string]any
	if err := json.Unmarshal(in.Data, &n); err != nil {
		t.Fatal(err)
	}
	if hosts, _ := n["hosts"].([]any); len(hosts) < 2 {
		t.Fatalf("the recorded night has %d hosts, want several", len(hosts))
	}
	n["hosts_per_run"] = 1
	data, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	in.Data = data
	wf := &fleet.Workflows{}
	if err := wf.Preload("qwen3"); err != nil {
		t.Fatal(err)
	}
	logger := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := fleet.Replay(wf, "itest", h, logger); err != nil {
		t.Fatalf("replay: %v", err)
	}
}
