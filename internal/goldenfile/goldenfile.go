// Package goldenfile compares test output with golden files under testdata
// and rewrites them when the test binary runs with -update.
//
// It registers the -update flag, so a test package that imports it must not
// declare its own. Check is safe for concurrent use by parallel tests that
// write different files.
package goldenfile

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

// update is a test flag, as flag.Bool in a _test.go file would be; it is
// read only by Check.
var update = flag.Bool("update", false, "rewrite the golden files with what the tests produce")

// Check compares got with the file at path and reports a difference as a
// test error showing both. With -update it first writes got to path.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it; review the diff):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
