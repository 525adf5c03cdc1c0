package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/readfile"
)

// nonNegative refuses negative durations, naming the flag.
func nonNegative(ds map[string]time.Duration) error {
	names := make([]string, 0, len(ds))
	for n := range ds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if ds[n] < 0 {
			return usagef("%s %s is negative (0 means none)", n, ds[n])
		}
	}
	return nil
}

// checkBaseURL refuses a model server URL that is not http(s)://host…
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--base-url %q is not an http:// or https:// URL", s)
	}
	if p := u.Port(); p != "" {
		var n int
		if _, err := fmt.Sscanf(p, "%d", &n); err != nil || n < 1 || n > 65535 {
			return usagef("--base-url %q: port %q is not a number from 1 to 65535", s, p)
		}
	}
	return nil
}

// checkInput checks that the file a flag names exists and is a readable
// regular file (or, with dirOK, a directory), before anything is dialled.
func checkInput(flagName, path string, dirOK bool) error {
	if dirOK {
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			f, err := os.Open(path)
			if err != nil {
				return usagef("%s: %v", flagName, err)
			}
			return f.Close()
		}
	}
	if err := readfile.Check(path); err != nil {
		if flagName == "--known-hosts" && errors.Is(err, os.ErrNotExist) {
			return usagef("%s: %v (--accept-new-host-key creates it on first use)", flagName, err)
		}
		return usagef("%s: %v", flagName, err)
	}
	return nil
}

// checkTokenizerArg checks a --tokenizer that is not a built-in name.
func checkTokenizerArg(t string) error {
	for _, b := range budget.Builtins() {
		if strings.EqualFold(t, b) {
			return nil
		}
	}
	if _, err := os.Stat(t); err != nil {
		return nil // LoadModel names the built-ins
	}
	return checkInput("--tokenizer", t, true)
}

// workerDeadline maps --retry-deadline to worker.Config.RetryDeadline,
// where zero is the default and a negative value means no retries.
func workerDeadline(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// sshCommandTimeout maps --command-timeout to sshexec.Config.CommandTimeout,
// where zero is the default (10 minutes) and a negative value means none.
func sshCommandTimeout(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
