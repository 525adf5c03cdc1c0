package sandbox_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// subtreeCPU is the CPU time (user and system) of every process below
// this one, live or reaped by a live descendant, read from /proc: on the
// target, whose processes all descend from this test process, it is what
// the commands and the sandbox's helper cost, however busy the machine
// is. Clock ticks are taken as 1/100 s (USER_HZ on Linux).
func subtreeCPU() (time.Duration, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, err
	}
	children := map[int][]int{}
	ticks := map[int]int64{}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		s := string(b)
		// pid (comm) state ppid … utime(14) stime(15) cutime(16) cstime(17)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(s[:strings.IndexByte(s, '(')]))
		if err != nil {
			continue
		}
		fs := strings.Fields(s[end+1:])
		if len(fs) < 15 {
			continue
		}
		ppid, _ := strconv.Atoi(fs[1])
		var t int64
		for _, i := range []int{11, 12, 13, 14} {
			v, _ := strconv.ParseInt(fs[i], 10, 64)
			t += v
		}
		children[ppid] = append(children[ppid], pid)
		ticks[pid] = t
	}
	var total int64
	queue := append([]int(nil), children[os.Getpid()]...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		total += ticks[p]
		queue = append(queue, children[p]...)
	}
	return time.Duration(total) * 10 * time.Millisecond, nil
}
