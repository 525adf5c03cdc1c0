package readfile_test

import (
	"errors"
	"fmt"

	"github.com/nightshift-dev/nightshift/internal/readfile"
)

func Example() {
	_, err := readfile.Read("/dev/zero", 1<<20)
	fmt.Println(err, errors.Is(err, readfile.ErrNotRegular))
	// Output: /dev/zero: not a regular file (a character device) true
}
