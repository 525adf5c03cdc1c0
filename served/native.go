//go:build hf_native

package served

import (
	"fmt"

	"github.com/daulet/tokenizers"
)

// nativeBuilt reports whether the hf_native backend is compiled in.
const nativeBuilt = true

// Native wraps the HuggingFace tokenizers library (Rust, through cgo and
// github.com/daulet/tokenizers) behind the Tokenizer interface. It is built
// only with the hf_native build tag and needs libtokenizers.a on the linker
// path (see the README); Config.Backend = BackendNative loads a model
// with it. Safe for concurrent use, as the Rust tokenizer is; Close releases
// it. Text is passed to the library as a C string, so a NUL byte ends it:
// the pure-Go backend counts such text exactly, this one does not.
type Native struct {
	tk *tokenizers.Tokenizer
}

var _ Tokenizer = (*Native)(nil)

// NewNative loads a tokenizer.json with the native library.
func NewNative(path string) (*Native, error) {
	tk, err := tokenizers.FromFile(path)
	if err != nil {
		return nil, fmt.Errorf("native tokenizer %q: %w", path, err)
	}
	return &Native{tk: tk}, nil
}

// newNativeTokenizer loads the bytes of a tokenizer.json with the native
// library; name is what errors call it.
func newNativeTokenizer(data []byte, name string) (Tokenizer, error) {
	tk, err := tokenizers.FromBytes(data)
	if err != nil {
		return nil, fmt.Errorf("native tokenizer %s: %w", name, err)
	}
	return &Native{tk: tk}, nil
}

// Encode returns the token IDs of text without adding special tokens.
func (n *Native) Encode(text string) []int {
	ids := n.tk.EncodeWithOptions(text, false).IDs
	if len(ids) == 0 {
		return nil
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

// Count returns the number of tokens of text.
func (n *Native) Count(text string) int {
	return len(n.tk.EncodeWithOptions(text, false).IDs)
}

// Close releases the native tokenizer.
func (n *Native) Close() error { return n.tk.Close() }
