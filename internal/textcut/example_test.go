package textcut_test

import (
	"fmt"
	"strings"

	"github.com/nightshift-dev/nightshift/internal/textcut"
)

func Example() {
	out, cut := textcut.Middle(strings.Repeat("a", 6)+strings.Repeat("b", 6), 6)
	fmt.Printf("%q %d\n", out, cut)
	fmt.Println(textcut.Head("sshd_disable_root_login", 12))
	// Output:
	// "aaa\n[… 6 bytes cut …]\nbbb" 6
	// sshd_disa…
}
