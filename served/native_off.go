//go:build !hf_native

package served

// nativeBuilt reports whether the hf_native backend is compiled in.
const nativeBuilt = false

// newNativeTokenizer is not reached without the hf_native tag: Offline and
// Connect refuse BackendNative first (Backend.check).
func newNativeTokenizer(data []byte, name string) (Tokenizer, error) {
	return nil, BackendNative.check()
}
