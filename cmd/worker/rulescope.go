package main

import (
	"fmt"
	"io"

	"github.com/nightshift-dev/nightshift/rules"
)

// warnUndeclared writes one line to w for each rule that declares no
// paths: with the recording sandbox every rule is judged default-deny, so
// each change its fix makes outside scratch will be refused, and its
// author is told at load rather than at its first command.
func warnUndeclared(w io.Writer, rs []rules.Rule) {
	for _, r := range rs {
		if r.Undeclared() {
			fmt.Fprintf(w, "worker: warning: %s: rule %s declares no paths: the sandbox will refuse every change its fix makes outside /tmp, /var/tmp, /var/cache and /dev/shm (add paths: to the rule)\n", r.Pos, r.ID)
		}
	}
}
