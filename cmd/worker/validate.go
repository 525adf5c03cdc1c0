package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nightshift-dev/nightshift/internal/readfile"
	"github.com/nightshift-dev/nightshift/served"
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
	for _, b := range served.Builtins() {
		if strings.EqualFold(t, b) {
			return nil
		}
	}
	if _, err := os.Stat(t); err != nil {
		return nil // served.Offline names the built-ins
	}
	return checkInput("--tokenizer", t, true)
}

// checkHostPort refuses an address flag that is not HOST:PORT with a port
// from 1 to 65535; listen addresses may leave the host out (":9464") and
// take port 0 (any free port).
func checkHostPort(flagName, addr string, listen bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || (host == "" && !listen) {
		return usagef("%s %q is not HOST:PORT", flagName, addr)
	}
	low := 1
	if listen {
		low = 0
	}
	if n, err := strconv.Atoi(port); err != nil || n < low || n > 65535 {
		return usagef("%s %q: port %q is not a number from %d to 65535", flagName, addr, port, low)
	}
	return nil
}

// accessWrite is access(2)'s W_OK.
const accessWrite = 0x2

// checkOutputs checks, before a run starts, that the reports it will write
// at its end can be written: the directory exists and can be written (or
// the file exists and can be), and the path is not a directory, a FIFO or
// a device.
func checkOutputs(m *runMeta) error {
	for _, o := range []struct{ flag, path string }{{"--json-report", m.JSONReport}, {"--junit", m.JUnit}, {"--html", m.HTML}} {
		if o.path == "" {
			continue
		}
		st, err := os.Stat(o.path)
		switch {
		case err == nil:
			if err := readfile.Regular(o.path, st.Mode()); err != nil {
				return usagef("%s: %v", o.flag, err)
			}
			if err := syscall.Access(o.path, accessWrite); err != nil {
				return usagef("%s %s: cannot be written: %v", o.flag, o.path, err)
			}
			continue
		case !errors.Is(err, os.ErrNotExist):
			return usagef("%s: %v", o.flag, err)
		}
		dir := filepath.Dir(o.path)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef("%s %s: no directory %s", o.flag, o.path, dir)
		}
		// A report is written at the end of the night: a directory it
		// cannot be created in (permissions, a read-only file system) is
		// said now, not after the night.
		if err := syscall.Access(dir, accessWrite); err != nil {
			return usagef("%s %s: directory %s cannot be written: %v", o.flag, o.path, dir, err)
		}
	}
	return nil
}

// checkRulesAndInventory checks the rules files (or directories) and the
// inventory a night reads.
func checkRulesAndInventory(m *runMeta, rulesPaths []string) error {
	for _, p := range rulesPaths {
		if err := checkInput("--rules", p, true); err != nil {
			return err
		}
	}
	if err := checkInput("--inventory", m.Inventory, false); err != nil {
		return err
	}
	return nil
}

// checkSSHFiles checks the SSH files a run names: --identity, and
// --known-hosts unless --accept-new-host-key may create it.
func checkSSHFiles(m *runMeta) error {
	if m.Identity != "" {
		if err := checkInput("--identity", m.Identity, false); err != nil {
			return err
		}
	}
	if m.KnownHosts != "" && !m.AcceptNew {
		if err := checkInput("--known-hosts", m.KnownHosts, false); err != nil {
			return err
		}
	}
	return nil
}

// validateServe checks fleet serve's flags before it dials Temporal.
func validateServe(m *runMeta, tokenizers []string) error {
	if err := nonNegative(map[string]time.Duration{"--command-timeout": m.CommandTimeout}); err != nil {
		return err
	}
	if err := checkBaseURL(m.BaseURL); err != nil {
		return err
	}
	if err := checkSSHFiles(m); err != nil {
		return err
	}
	for _, t := range tokenizers {
		if err := checkTokenizerArg(t); err != nil {
			return err
		}
	}
	return nil
}

// validateStart checks fleet start's flags before it asks the model server
// or dials Temporal.
func validateStart(m *runMeta, rulesPaths []string) error {
	if err := checkBaseURL(m.BaseURL); err != nil {
		return err
	}
	if err := checkRulesAndInventory(m, rulesPaths); err != nil {
		return err
	}
	if err := checkOutputs(m); err != nil {
		return err
	}
	return checkTokenizerArg(m.Tokenizer)
}
