package goldenfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/internal/goldenfile"
)

// reporter stands for the test: it prints what Check reports.
type reporter struct{ testing.TB }

func (reporter) Helper() {}
func (reporter) Errorf(format string, args ...any) {
	first := strings.SplitN(fmt.Sprintf(format, args...), "\n", 2)[0]
	fmt.Println(filepath.Base(first))
}

// A test compares its output with testdata/NAME.golden; a difference is a
// test error naming the file (go test -update rewrites it).
func Example() {
	dir, err := os.MkdirTemp("", "golden")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "summary.golden")
	if err := os.WriteFile(path, []byte("fixed 3\n"), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	goldenfile.Check(reporter{}, path, []byte("fixed 3\n")) // the same: nothing reported
	goldenfile.Check(reporter{}, path, []byte("fixed 2\n"))
	fmt.Println("checked")
	// Output:
	// summary.golden differs (go test -update rewrites it; review the diff):
	// checked
}
