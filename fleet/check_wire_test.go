package fleet

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/rules"
)

// TestRecordedCheckReadsBothForms: the check activity's result reads back
// from histories that hold the status as text (this version) and as
// rules.Status's number (recorded before); anything else is an error.
func TestRecordedCheckReadsBothForms(t *testing.T) {
	now, err := json.Marshal(rules.CheckResult{Status: nightshift.CheckFail, ExitCode: 1, Output: "x", Detail: "exit 1: not compliant"})
	require.NoError(t, err)
	require.Contains(t, string(now), `"Status":"fail"`)
	tests := []struct {
		name, payload string
		want          nightshift.CheckStatus
	}{
		{"text", string(now), nightshift.CheckFail},
		{"number: pass", `{"Status":1,"ExitCode":0}`, nightshift.CheckPass},
		{"number: fail", `{"Status":2,"ExitCode":1}`, nightshift.CheckFail},
		{"number: error", `{"Status":3,"ExitCode":-1}`, nightshift.CheckError},
		{"number: notapplicable", `{"Status":4}`, nightshift.CheckNotApplicable},
	}
	for _, tt := range tests {
		var rc recordedCheck
		require.NoError(t, json.Unmarshal([]byte(tt.payload), &rc), tt.name)
		assert.Equal(t, tt.want, nightshift.CheckStatus(rc.Status), tt.name)
	}
	for _, bad := range []string{`{"Status":5}`, `{"Status":"passed"}`, `{"Status":true}`} {
		var rc recordedCheck
		assert.Error(t, json.Unmarshal([]byte(bad), &rc), bad)
	}
}
