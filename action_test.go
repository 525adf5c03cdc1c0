package nightshift_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nightshift-dev/nightshift"
)

func TestActionOf(t *testing.T) {
	lost := errors.New("connection lost")
	tests := []struct {
		name string
		ex   nightshift.Exec
		err  error
		want nightshift.Action
	}{
		{"exit 0", nightshift.Exec{ExitCode: 0}, nil, nightshift.ActionRan},
		{"exit 1", nightshift.Exec{ExitCode: 1}, nil, nightshift.ActionRan},
		{"signal", nightshift.Exec{ExitCode: 137, Signal: "KILL"}, nil, nightshift.ActionRan},
		{"timed out", nightshift.Exec{ExitCode: -1, TimedOut: true}, nil, nightshift.ActionTimedOut},
		{"runner error", nightshift.Exec{ExitCode: -1}, lost, nightshift.ActionUnknown},
		{"runner error after a timeout", nightshift.Exec{ExitCode: -1, TimedOut: true}, lost, nightshift.ActionUnknown},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, nightshift.ActionOf(tt.ex, tt.err), tt.name)
	}
}
