package fleet_test

import (
	"compress/gzip"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tlog "go.temporal.io/sdk/log"

	"github.com/nightshift-dev/nightshift/fleet"
)

// The histories under testdata/replay were recorded from a real Temporal
// dev server by cmd/worker's TestFleetIntegration (a night of 10 rules × 6
// hosts on two zones, one worker process killed with SIGKILL mid-run) with
// NIGHTSHIFT_RECORD_FLEET_HISTORY=1. Replaying them with today's code fails
// when a change to the workflows would break the nights running when it is
// deployed: such a change needs workflow.GetVersion, and the old histories
// stay here.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "replay", "*.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("want recorded histories of a night and a host in testdata/replay, found %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			wf := &fleet.Workflows{}
			if err := wf.Preload("qwen3"); err != nil {
				t.Fatal(err)
			}
			h := readHistory(t, f)
			id, err := url.PathUnescape(strings.TrimSuffix(filepath.Base(f), ".json.gz"))
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
