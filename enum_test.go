package nightshift_test

import (
	"encoding"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
)

// enum is what every enumeration of the package offers.
type enum interface {
	encoding.TextMarshaler
	String() string
}

// TestEnumTextRoundTrip checks, for every value of every enumeration, that
// its text is distinct, reads back to the same value, and equals String;
// the texts are the stored forms, so they are pinned here.
func TestEnumTextRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		values []enum
		texts  []string
		parse  func([]byte) (enum, error)
	}{
		{
			name: "Action",
			values: []enum{nightshift.ActionNone, nightshift.ActionRan, nightshift.ActionBlocked, nightshift.ActionRefused,
				nightshift.ActionMalformed, nightshift.ActionTimedOut, nightshift.ActionUnknown, nightshift.ActionGiveUp},
			texts: []string{"", "ran", "blocked", "refused", "malformed", "timed_out", "unknown", "give_up"},
			parse: func(b []byte) (enum, error) { var v nightshift.Action; err := v.UnmarshalText(b); return v, err },
		},
		{
			name: "CheckStatus",
			values: []enum{nightshift.CheckNotRun, nightshift.CheckPass, nightshift.CheckFail, nightshift.CheckError,
				nightshift.CheckNotApplicable},
			texts: []string{"", "pass", "fail", "error", "notapplicable"},
			parse: func(b []byte) (enum, error) { var v nightshift.CheckStatus; err := v.UnmarshalText(b); return v, err },
		},
		{
			name: "RuleStatus",
			values: []enum{nightshift.RuleNone, nightshift.RuleFixed, nightshift.RuleCompliant, nightshift.RuleNotFixed,
				nightshift.RuleGaveUp, nightshift.RuleCheckError, nightshift.RuleFailed, nightshift.RuleUnreachable,
				nightshift.RuleInterrupted, nightshift.RuleNotApplicable},
			texts: []string{"", "fixed", "compliant", "not_fixed", "gave_up", "check_error", "failed", "unreachable", "interrupted", "notapplicable"},
			parse: func(b []byte) (enum, error) { var v nightshift.RuleStatus; err := v.UnmarshalText(b); return v, err },
		},
		{
			name:   "RunStatus",
			values: []enum{nightshift.RunNone, nightshift.RunRunning, nightshift.RunDone, nightshift.RunInterrupted, nightshift.RunFailed},
			texts:  []string{"", "running", "done", "interrupted", "failed"},
			parse:  func(b []byte) (enum, error) { var v nightshift.RunStatus; err := v.UnmarshalText(b); return v, err },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Len(t, tt.values, len(tt.texts))
			for i, v := range tt.values {
				b, err := v.MarshalText()
				require.NoError(t, err)
				assert.Equal(t, tt.texts[i], string(b))
				assert.Equal(t, tt.texts[i], v.String())
				back, err := tt.parse(b)
				require.NoError(t, err)
				assert.Equal(t, v, back)
			}
			_, err := tt.parse([]byte("no-such-value"))
			assert.ErrorIs(t, err, nightshift.ErrUnknownValue)
			assert.Contains(t, err.Error(), `"no-such-value"`)
		})
	}
}

// TestUnknownValueRefused checks that a value outside the table is neither
// written nor read, in JSON too.
func TestUnknownValueRefused(t *testing.T) {
	_, err := nightshift.RuleStatus(200).MarshalText()
	assert.ErrorIs(t, err, nightshift.ErrUnknownValue)
	assert.Equal(t, "RuleStatus(200)", nightshift.RuleStatus(200).String())

	var v struct {
		Status nightshift.RuleStatus `json:"status"`
	}
	err = json.Unmarshal([]byte(`{"status":"fixd"}`), &v)
	require.Error(t, err)
	assert.True(t, errors.Is(err, nightshift.ErrUnknownValue), "got %v", err)

	require.NoError(t, json.Unmarshal([]byte(`{"status":"gave_up"}`), &v))
	assert.Equal(t, nightshift.RuleGaveUp, v.Status)
}

func TestRuleStatusClasses(t *testing.T) {
	for _, s := range nightshift.RuleStatuses() {
		n := 0
		for _, b := range []bool{s.Passed(), s.IsFailure(), s.IsError()} {
			if b {
				n++
			}
		}
		if s == nightshift.RuleNotApplicable {
			assert.Equal(t, 0, n, "%s", s)
			continue
		}
		assert.Equal(t, 1, n, "%s is in exactly one of passed, failure, error", s)
	}
	assert.Len(t, nightshift.RuleStatuses(), 10)
}

func TestExec(t *testing.T) {
	tests := []struct {
		ex     nightshift.Exec
		exited bool
	}{
		{nightshift.Exec{ExitCode: 0}, true},
		{nightshift.Exec{ExitCode: 2}, true},
		{nightshift.Exec{ExitCode: 137, Signal: "KILL"}, false},
		{nightshift.Exec{ExitCode: -1, TimedOut: true}, false},
		{nightshift.Exec{ExitCode: -1, Canceled: true}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.exited, tt.ex.Exited(), "%+v", tt.ex)
	}
	assert.Equal(t, int64(7), nightshift.Exec{StdoutCut: 3, StderrCut: 4}.CutBytes())
	assert.True(t, nightshift.ActionTimedOut.Ran())
	assert.False(t, nightshift.ActionBlocked.Ran())
}
