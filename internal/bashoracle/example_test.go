package bashoracle_test

import (
	"context"
	"fmt"

	"github.com/nightshift-dev/nightshift/internal/bashoracle"
)

// Run a command under real bash in the sandbox and list what it executed,
// wrote and signalled. (Needs root, bwrap and strace, as in CI.)
func Example() {
	ctx := context.Background()
	o, err := bashoracle.New(ctx, bashoracle.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer o.Close()
	tr, err := o.Run(ctx, `for d in /etc /usr; do rm -rf $d; done; { cat /dev/zero; } > /dev/sda; kill -INT 1`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range tr.Execs {
		fmt.Println(e)
	}
	for _, w := range tr.Writes {
		if w.Path == "/dev/sda" {
			fmt.Println("write", w.Path)
		}
	}
	for _, s := range tr.Signals {
		fmt.Println(s)
	}
	// Output:
	// exec ["rm" "-rf" "/etc"]
	// exec ["rm" "-rf" "/usr"]
	// write /dev/sda
	// kill(1, SIGINT)
}
