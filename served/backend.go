package served

import (
	"errors"
	"fmt"
	"strings"
)

// Backend names the implementation behind a loaded Model's Tokenizer. Both
// yield the IDs of HuggingFace tokenizers with add_special_tokens=false.
type Backend uint8

const (
	// BackendGo is the pure-Go byte-level BPE of package served/bpe: always
	// available; the zero value.
	BackendGo Backend = iota
	// BackendNative is the HuggingFace tokenizers library itself (Rust,
	// through cgo and github.com/daulet/tokenizers): only in builds with the
	// hf_native tag and libtokenizers.a on the linker path (see Native).
	BackendNative
)

var backendNames = [...]string{BackendGo: "go", BackendNative: "native"}

// ErrUnknownBackend is returned by ParseBackend for a name that is no
// backend.
var ErrUnknownBackend = errors.New("unknown tokenizer backend")

// ErrBackendNotBuilt is returned when a backend is asked for that this
// binary was built without (BackendNative without the hf_native tag).
var ErrBackendNotBuilt = errors.New("tokenizer backend not built into this binary")

// Backends lists the backends by name, in order ("go", "native"), whether
// built in or not (see Backend.Available).
func Backends() []string { return backendNames[:] }

// ParseBackend reads a backend's name ("go", "native"; case-insensitive).
func ParseBackend(s string) (Backend, error) {
	for b, n := range backendNames {
		if strings.EqualFold(s, n) {
			return Backend(b), nil
		}
	}
	return 0, fmt.Errorf("%w %q (want %s)", ErrUnknownBackend, s, strings.Join(backendNames[:], " or "))
}

// String returns the backend's name, or "Backend(N)" for a value that is
// none.
func (b Backend) String() string {
	if int(b) < len(backendNames) {
		return backendNames[b]
	}
	return fmt.Sprintf("Backend(%d)", uint8(b))
}

// Available reports whether this binary can load tokenizers with b.
func (b Backend) Available() bool {
	switch b {
	case BackendGo:
		return true
	case BackendNative:
		return nativeBuilt
	}
	return false
}

// check returns nil when b can be used, or an error saying why not.
func (b Backend) check() error {
	switch {
	case int(b) >= len(backendNames):
		return fmt.Errorf("%w %s", ErrUnknownBackend, b)
	case !b.Available():
		return fmt.Errorf("%w: %s (build with -tags hf_native and libtokenizers.a on the linker path)", ErrBackendNotBuilt, b)
	}
	return nil
}
