//go:build hf_native

package served

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNativeMatchesGo: with the hf_native tag, every built-in model loads
// with the native backend and yields the pure-Go backend's IDs on the tool
// outputs of testdata/outputs (the Go backend is itself checked against HF
// tokenizers by the golden tests).
func TestNativeMatchesGo(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "outputs", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range Builtins() {
		t.Run(name, func(t *testing.T) {
			goModel, err := loadFiles(name, BackendGo)
			require.NoError(t, err)
			native, err := loadFiles(name, BackendNative)
			require.NoError(t, err)
			defer native.close()
			require.IsType(t, &Native{}, native.Tokenizer)
			assert.Equal(t, goModel.ChatTemplate, native.ChatTemplate)
			for _, f := range files {
				data, err := os.ReadFile(f)
				require.NoError(t, err)
				text := string(data)
				assert.Equal(t, goModel.Tokenizer.Encode(text), native.Tokenizer.Encode(text), f)
				assert.Equal(t, goModel.Tokenizer.Count(text), native.Tokenizer.Count(text), f)
			}
		})
	}
}
