package served

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBackend(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want Backend
		err  error
	}{
		{"go", BackendGo, nil},
		{"GO", BackendGo, nil},
		{"native", BackendNative, nil},
		{"Native", BackendNative, nil},
		{"", 0, ErrUnknownBackend},
		{"rust", 0, ErrUnknownBackend},
		{"native ", 0, ErrUnknownBackend},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseBackend(tt.in)
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				assert.ErrorContains(t, err, `want go or native`)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, strings.ToLower(tt.in), got.String())
		})
	}
	assert.Equal(t, []string{"go", "native"}, Backends())
	assert.Equal(t, "Backend(7)", Backend(7).String())
}

// TestLoadFilesWithBackend: the Go backend yields the pure-Go tokenizer for
// a built-in and for a file; a backend that is no backend is refused before
// anything is read; the native backend loads only when built in.
func TestLoadFilesWithBackend(t *testing.T) {
	t.Parallel()
	m, err := loadFiles("qwen3", BackendGo)
	require.NoError(t, err)
	assert.Equal(t, BackendGo, m.Backend)
	assert.Equal(t, 8, m.Tokenizer.Count("sshd -t && systemctl reload ssh"))
	assert.NoError(t, m.close())

	_, err = loadFiles("qwen3", Backend(9))
	assert.ErrorIs(t, err, ErrUnknownBackend)

	_, err = loadFiles(filepath.Join(t.TempDir(), "missing.json"), BackendNative)
	if nativeBuilt {
		assert.ErrorIs(t, err, os.ErrNotExist)
		return
	}
	assert.ErrorIs(t, err, ErrBackendNotBuilt, "refused before the (missing) file is looked at")
	assert.False(t, errors.Is(err, ErrUnknownTokenizer))
	assert.ErrorContains(t, err, "-tags hf_native")
	assert.False(t, BackendNative.Available())
	assert.True(t, BackendGo.Available())
}

// TestBuiltinLoadedOnce: every load of a built-in returns files of
// its own (changing one changes no other) around the one tokenizer parsed
// for the process, which counts as a fresh parse of the embedded file does.
func TestBuiltinLoadedOnce(t *testing.T) {
	for _, name := range Builtins() {
		t.Run(name, func(t *testing.T) {
			a, err := loadFiles(name, BackendGo)
			require.NoError(t, err)
			a.Name, a.ChatTemplate = "changed", ""
			b, err := loadFiles(strings.ToUpper(name), BackendGo)
			require.NoError(t, err)
			assert.Equal(t, name, b.Name)
			assert.NotEmpty(t, b.ChatTemplate)
			assert.Same(t, a.Tokenizer, b.Tokenizer, "the built-in is parsed once")
			fresh, err := loadBuiltin(name, *builtins[name], BackendGo)
			require.NoError(t, err)
			assert.NotSame(t, fresh.Tokenizer, b.Tokenizer)
			const text = "PermitRootLogin no\n# 日本語 and emoji 🙂"
			assert.Equal(t, fresh.Tokenizer.Encode(text), b.Tokenizer.Encode(text))
		})
	}
}
