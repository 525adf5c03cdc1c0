package hostfile_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/nightshift-dev/nightshift/internal/hostfile"

	"github.com/nightshift-dev/nightshift"
)

// answers plays a host holding one 5-byte file: wc's size, then the bytes.
type answers struct{}

func (answers) Run(_ context.Context, command string) (nightshift.Exec, error) {
	if strings.Contains(command, "wc -c") {
		return nightshift.Exec{Stdout: "5\n"}, nil
	}
	return nightshift.Exec{Stdout: "hello"}, nil
}

func ExampleRead() {
	data, err := hostfile.Read(context.Background(), answers{}, "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml", 1<<20)
	fmt.Printf("%q %v\n", data, err)
	// Output: "hello" <nil>
}
