package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
)

// demoSandbox stands in for the recording sandbox on the demo's in-process
// host, which runs without root or namespaces and so cannot have the real
// one (package sandbox): each command runs first in a copy of the host's
// directory, what it changed there becomes nightshift.Effects, the real
// judge (safety.JudgeEffects) decides, and only allowed changes are copied
// into the host's directory. Paths are shown as the host's ("/etc/…" for
// the directory's etc/…). It implements nightshift.Runner.
type demoSandbox struct {
	host *demoHost
	pol  safety.EffectsPolicy

	mu   sync.Mutex
	seen []demoJudged
}

// demoJudged is one command and what became of its effects.
type demoJudged struct {
	Command  string
	Evidence nightshift.Evidence
}

// Observe keeps the evidence of each command for the demo's end.
func (s *demoSandbox) Observe(e nightshift.Event) {
	if e.Kind == nightshift.EventCommand && e.Evidence != nil {
		s.mu.Lock()
		s.seen = append(s.seen, demoJudged{e.Command, *e.Evidence})
		s.mu.Unlock()
	}
}

func (s *demoSandbox) judged() []demoJudged {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]demoJudged(nil), s.seen...)
}

// Run implements nightshift.Runner.
func (s *demoSandbox) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	scratch, err := os.MkdirTemp(filepath.Dir(s.host.dir), "trial-")
	if err != nil {
		return nightshift.Exec{ExitCode: -1}, err
	}
	defer os.RemoveAll(scratch)
	if err := copyTree(s.host.dir, scratch); err != nil {
		return nightshift.Exec{ExitCode: -1}, fmt.Errorf("demo sandbox: copy the host: %w", err)
	}
	var stdout, stderr bytes.Buffer
	code := s.host.execIn(ctx, scratch, command, &stdout, &stderr)
	ex := nightshift.Exec{Stdout: stdout.String(), Stderr: stderr.String(), ExitCode: code}
	eff, err := treeEffects(s.host.dir, scratch)
	if err != nil {
		return nightshift.Exec{ExitCode: -1}, fmt.Errorf("demo sandbox: %w", err)
	}
	// The judge reads eff as it is; the evidence carries it redacted.
	ev := &nightshift.Evidence{Trial: "demo", Effects: eff.Redacted()}
	ex.Evidence = ev
	// Judged under the rule's scope, as package sandbox's Runner does.
	pol := s.pol
	if sc := sandbox.RuleScopeOf(ctx); sc.Strict {
		pol.Scope, pol.StrictScope, pol.Units, pol.Sysctl, pol.Keys, pol.Rule, pol.ScopeNote = sc.Paths, true, sc.Units, sc.Sysctl, sc.Keys, sc.Rule, sc.Note
	}
	if refs := safety.JudgeEffects(eff, pol); len(refs) > 0 {
		ev.Verdict = nightshift.VerdictRefused
		for _, r := range refs {
			ev.Reasons = append(ev.Reasons, r.Reason)
		}
		return ex, nil
	}
	if err := applyTree(eff, scratch, s.host.dir); err != nil {
		return ex, fmt.Errorf("demo sandbox: commit: %w", err)
	}
	ev.Verdict = nightshift.VerdictCommitted
	return ex, nil
}

// demoEntry is one path of a tree.
type demoEntry struct {
	state nightshift.FileState
	text  string // a small text file's contents
}

// readTree lists every path under root (relative, slash-separated).
func readTree(root string) (map[string]demoEntry, error) {
	out := map[string]demoEntry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := demoEntry{state: nightshift.FileState{Mode: uint32(fi.Mode().Perm())}}
		switch {
		case fi.IsDir():
			e.state.Kind = nightshift.FileDir
		case fi.Mode()&fs.ModeSymlink != 0:
			e.state.Kind = nightshift.FileSymlink
			e.state.Target, _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			e.state.Kind, e.state.Size, e.state.SHA256 = nightshift.FileRegular, fi.Size(), hex.EncodeToString(sum[:])
			if len(b) <= 64<<10 && utf8.Valid(b) {
				e.text = string(b)
			}
		default:
			e.state.Kind = nightshift.FileOther
		}
		out[filepath.ToSlash(rel)] = e
		return nil
	})
	return out, err
}

// treeEffects compares the host's directory with the trial's copy. A
// deleted directory is one change counting what it held.
func treeEffects(hostDir, trial string) (nightshift.Effects, error) {
	before, err := readTree(hostDir)
	if err != nil {
		return nightshift.Effects{}, err
	}
	after, err := readTree(trial)
	if err != nil {
		return nightshift.Effects{}, err
	}
	var eff nightshift.Effects
	deletedDir := func(p string) bool {
		for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
			if _, ok := after[d]; !ok {
				if e, was := before[d]; was && e.state.Kind == nightshift.FileDir {
					return true
				}
			}
		}
		return false
	}
	for p, b := range before {
		if _, ok := after[p]; ok || deletedDir(p) {
			continue
		}
		c := nightshift.FileChange{Path: "/" + p, Change: nightshift.ChangeDeleted, Before: b.state}
		if b.state.Kind == nightshift.FileDir {
			for q := range before {
				if strings.HasPrefix(q, p+"/") {
					c.Entries++
				}
			}
		}
		eff.Changes = append(eff.Changes, c)
	}
	for p, a := range after {
		b, ok := before[p]
		c := nightshift.FileChange{Path: "/" + p, Before: b.state, After: a.state}
		switch {
		case !ok:
			c.Change = nightshift.ChangeCreated
		case b.state.Kind != a.state.Kind || b.state.SHA256 != a.state.SHA256 || b.state.Target != a.state.Target:
			c.Change = nightshift.ChangeModified
		case b.state.Mode != a.state.Mode:
			c.Change = nightshift.ChangeMeta
		default:
			continue
		}
		if a.state.Kind == nightshift.FileRegular && (b.text != "" || !ok) && a.text != "" {
			c.Diff, _ = difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(b.text), B: difflib.SplitLines(a.text),
				FromFile: "a/" + p, ToFile: "b/" + p, Context: 3})
		}
		eff.Changes = append(eff.Changes, c)
	}
	sort.Slice(eff.Changes, func(i, j int) bool { return eff.Changes[i].Path < eff.Changes[j].Path })
	return eff, nil
}

// applyTree copies the trial's changes into the host's directory: each
// file written beside and renamed over, deletions last-first.
func applyTree(eff nightshift.Effects, trial, hostDir string) error {
	for _, c := range eff.Changes {
		rel := filepath.FromSlash(strings.TrimPrefix(c.Path, "/"))
		dst, src := filepath.Join(hostDir, rel), filepath.Join(trial, rel)
		switch c.Change {
		case nightshift.ChangeDeleted:
			if err := os.RemoveAll(dst); err != nil {
				return err
			}
		case nightshift.ChangeMeta:
			if err := os.Chmod(dst, fs.FileMode(c.After.Mode)); err != nil {
				return err
			}
		case nightshift.ChangeCreated, nightshift.ChangeModified:
			if err := copyEntry(src, dst); err != nil {
				return err
			}
		case nightshift.ChangeNone:
		default:
			// Every Change value is listed above.
		}
	}
	return nil
}

// copyTree copies a directory tree (files, directories, symlinks).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == src {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		return copyEntry(p, filepath.Join(dst, rel))
	})
}

// copyEntry copies one entry (not a directory's contents), atomically for
// a file.
func copyEntry(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if err := os.MkdirAll(dst, fi.Mode().Perm()); err != nil {
			return err
		}
		return os.Chmod(dst, fi.Mode().Perm())
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		_ = os.Remove(dst)
		return os.Symlink(target, dst)
	case fi.Mode().IsRegular():
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		tmp := dst + ".nightshift-new"
		out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
		return os.Rename(tmp, dst)
	default:
		return nil // FIFOs and sockets are not copied
	}
}
