package debtarget_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nightshift-dev/nightshift/internal/debtarget"
)

// Close refuses to delete a target's directory while mounts are left under
// it; MountsUnder is the check it makes.
func ExampleMountsUnder() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	info := filepath.Join(dir, "mountinfo")
	os.WriteFile(info, []byte("40 22 0:5 / /tmp/t/root/proc rw - proc proc rw\n41 22 0:6 / /srv rw - tmpfs tmpfs rw\n"), 0o644)
	fmt.Println(debtarget.MountsUnder(info, "/tmp/t"))
	// Output: [/tmp/t/root/proc]
}
