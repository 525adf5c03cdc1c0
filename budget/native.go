//go:build hf_native

package budget

import (
	"fmt"

	"github.com/daulet/tokenizers"
)

// Native wraps the HuggingFace tokenizers library (Rust, through cgo and
// github.com/daulet/tokenizers) behind the Tokenizer interface. It is built
// only with the hf_native build tag and needs libtokenizers.a on the linker
// path (see the README). Safe for concurrent use, as the Rust tokenizer is.
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

// Encode returns the token IDs of text without adding special tokens.
func (n *Native) Encode(text string) []int {
	ids, _ := n.tk.Encode(text, false)
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

// Count returns the number of tokens of text.
func (n *Native) Count(text string) int {
	ids, _ := n.tk.Encode(text, false)
	return len(ids)
}

// Close releases the native tokenizer.
func (n *Native) Close() error { return n.tk.Close() }
