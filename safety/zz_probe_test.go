package safety_test

import (
	"bufio"
	"fmt"
	"os"
	"testing"

	"github.com/nightshift-dev/nightshift/safety"
)

func TestZZProbe(t *testing.T) {
	f, _ := os.Open("/tmp/pf/probe.txt")
	sc := bufio.NewScanner(f)
	bl := safety.DefaultBanList()
	for sc.Scan() {
		ban, bad := bl.Match(sc.Text())
		fmt.Printf("%-5v %-5v %-15s %-60q %s\n", bad, ban.Certain, ban.Entry, sc.Text(), ban.Construct)
	}
}
