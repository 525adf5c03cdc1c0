package budget

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewDefaultsAndValidation(t *testing.T) {
	t.Parallel()
	b, err := New(Config{})
	require.NoError(t, err)
	assert.Equal(t, 16384, b.ContextWindow(), "window")
	assert.Equal(t, 1024, b.Reserve(), "reserve")
	assert.Equal(t, 12288, b.SoftLimit(), "soft limit")
	assert.Equal(t, 16384-32, b.Limit(), "limit")
	assert.Equal(t, 16384-1024-32, b.PromptLimit(), "prompt limit")
	b, err = New(Config{Margin: -1})
	require.NoError(t, err, "negative margin")
	assert.Equal(t, 16384, b.Limit(), "negative margin: no margin")
	bad := []struct {
		name string
		cfg  Config
		want string
	}{
		{"reserve fills the window", Config{ContextWindow: 4096, Reserve: 4096}, "leave no room for a prompt"},
		{"reserve plus margin fill the window", Config{ContextWindow: 4096, Reserve: 4064, Margin: 32}, "leave no room"},
		{"negative window", Config{ContextWindow: -1}, "context window -1 is negative"},
		{"negative reserve", Config{Reserve: -5}, "reserve -5 is negative"},
		{"soft above the hard limit", Config{SoftLimit: 20000}, "soft limit 20000"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			require.ErrorIs(t, err, ErrConfig)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
