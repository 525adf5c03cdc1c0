package batch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/rules"

	"github.com/nightshift-dev/nightshift"
)

// Every check result the journal records reads back as itself; anything
// else is an error, never a status (the old reader returned StatusUnknown).
func TestRecordedCheckStatus(t *testing.T) {
	for _, s := range []rules.Status{rules.StatusPass, rules.StatusFail, rules.StatusError, rules.StatusNotApplicable} {
		got, err := recordedCheckStatus(s.String())
		require.NoError(t, err, s.String())
		assert.Equal(t, s, got)
	}
	for _, text := range []string{"", "unknown", "passed", "PASS", "give_up"} {
		got, err := recordedCheckStatus(text)
		assert.ErrorIs(t, err, nightshift.ErrUnknownValue, "%q", text)
		assert.Equal(t, rules.StatusUnknown, got, "%q", text)
	}
}
