package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/internal/readfile"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

const resumeUsage = `Usage:
  worker resume JOURNAL [--run ID] [flags]

Continues a run of 'worker run' after a crash, a kill or a stop, with the
rules files, inventory and settings it recorded (the flags below override
them). Finished rules × hosts are not redone. A rule in progress continues from
its recorded state: the recorded model replies, command results and check
results are replayed to the worker without calling the model or touching the
host, then it goes on. A command that was running when the worker died has an
unknown outcome: it is recorded as such, the rule's check is re-run, and that
command is never run again.

Hosts that ended unreachable are tried again: their rules resume from what
they recorded. By default the last run of the journal that did not finish,
or that finished with a host unreachable, is resumed.
A zero-byte journal, or one in which no run was recorded (the worker stopped
before it started one), has nothing to resume and is refused (exit 2), as is
a journal copied without its -wal file while a worker had it open (its
records are in that file) and a journal another worker process has open,
through whatever path (exit 2).

A run records a digest of each of its rules. If the rules files changed
since (a rule edited, added or removed), resume refuses and names each rule
that changed, so that one run never mixes two versions of a rule; pass
--accept-changed-rules to go on with the rules as they are now.
`

const resumeExamples = `
Examples:
  worker resume night.db
  worker resume night.db --run 3 --base-url http://gpu2:8000/v1 --parallel-hosts 8
`

func runResume(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := &runMeta{}
	var runID int64
	var verbose, acceptRules bool
	var of observeFlags
	fs := newFlags(cmdResume, stderr)
	fs.bind("run", &runID)
	fs.bind("v", &verbose)
	fs.bind("accept-changed-rules", &acceptRules)
	bindRunFlags(fs, o, &of)
	setUsage(fs.FlagSet, resumeUsage, resumeExamples)
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	path, err := journalArg(rest)
	if err != nil {
		return err
	}
	if path == "" {
		return usagef("the journal file is required: worker resume JOURNAL")
	}
	j, err := openExisting(ctx, path, false)
	if err != nil {
		return err
	}
	defer j.Close()
	id, err := pickRun(ctx, j, journal.RunID(runID))
	if err != nil {
		return err
	}
	rec, err := batch.RecordedSpec(ctx, j, id)
	if err != nil {
		return &usageError{err}
	}
	m, err := decodeMeta(rec.Meta)
	if err != nil {
		return err
	}
	// A run recorded before --request-timeout and --max-reply-bytes has
	// neither: the defaults.
	m.RequestTimeout = cmp.Or(m.RequestTimeout, worker.DefaultRequestTimeout)
	m.MaxReplyBytes = cmp.Or(m.MaxReplyBytes, worker.DefaultMaxReplyBytes)
	fs.Visit(func(f *flag.Flag) { // overrides
		switch f.Name {
		case "base-url":
			m.BaseURL = o.BaseURL
		case "model":
			m.Model = o.Model
		case "api-key-env":
			m.APIKeyEnv = o.APIKeyEnv
		case "parallel-hosts":
			m.ParallelHosts = o.ParallelHosts
		case "model-concurrency":
			m.ModelConcurrency = o.ModelConcurrency
		case "json-report":
			m.JSONReport = absPath(o.JSONReport)
		case "junit":
			m.JUnit = absPath(o.JUnit)
		case "html":
			m.HTML = absPath(o.HTML)
		case "retry-deadline":
			m.RetryDeadline = o.RetryDeadline
		case "request-timeout":
			m.RequestTimeout = o.RequestTimeout
		case "max-reply-bytes":
			m.MaxReplyBytes = o.MaxReplyBytes
		case "host-reconnect-deadline":
			m.ReconnectDeadline = o.ReconnectDeadline
		}
	})
	if m.ParallelHosts < 1 || m.ModelConcurrency < 1 {
		return usagef("--parallel-hosts and --model-concurrency must be positive")
	}
	if err := nonNegative(map[string]time.Duration{"--retry-deadline": m.RetryDeadline, "--host-reconnect-deadline": m.ReconnectDeadline}); err != nil {
		return err
	}
	if err := checkReplyFlags(m.RequestTimeout, m.MaxReplyBytes); err != nil {
		return err
	}
	if err := checkBaseURL(m.BaseURL); err != nil {
		return err
	}
	if err := checkOutputs(m); err != nil {
		return err
	}
	if err := of.validate(); err != nil {
		return err
	}
	sg := catchSignals(ctx, stderr)
	defer sg.close()
	base := sshBase(m, nil)
	base.OnDialFailure = dialNotices(stderr) // --datastream is read from the first host that answers
	spec, err := loadSpec(sg.start, m, orchestrate.SSHConnector{Base: base})
	if err != nil {
		return sg.startErr(err, "reading the datastream from the hosts")
	}
	warnUndeclared(stderr, spec.Rules)
	if m.RulesDigest != nil {
		if changed := rulesChanged(m.RulesDigest, spec.Rules); changed != "" {
			if !acceptRules {
				return usagef("the rules changed since run %d started: %s; resuming would mix two versions of a rule in one run (pass --accept-changed-rules to resume with the rules as they are now)", id, changed)
			}
			fmt.Fprintf(stderr, "worker: resuming run %d with changed rules (--accept-changed-rules): %s\n", id, changed)
		}
	}
	fmt.Fprintf(stdout, "resuming run %d (%s)\n", id, rec.Name)
	return runBatch(ctx, sg, j, m, spec, id, verbose, of, stdout, stderr)
}

// journalArg is the one positional argument of resume, history and
// undo: the journal's path ("" when none is given).
func journalArg(rest []string) (string, error) {
	switch len(rest) {
	case 0:
		return "", nil
	case 1:
		return rest[0], nil
	}
	return "", usagef("unexpected argument %q", rest[1])
}

// parseJournalRun parses the flags of a command that works on one run of
// a journal (worker undo, worker export) and returns the journal file,
// its one argument. The file and --run (runID, bound to fs) are required:
// form, the command's synopsis, and what, the run's part in it, say so.
func parseJournalRun(fs *flags, args []string, runID *int64, form, what string) (string, error) {
	rest, err := fs.parse(args)
	if err != nil {
		return "", err
	}
	path, err := journalArg(rest)
	switch {
	case err != nil:
		return "", err
	case path == "":
		return "", usagef("the journal file is required: %s", form)
	case *runID <= 0:
		return "", usagef("--run is required: %s", what)
	}
	return path, nil
}

// openExisting opens a journal that must exist and hold something: a
// zero-byte file is refused as holding no run (it is not given a schema).
// A writer takes the journal's lock.
func openExisting(ctx context.Context, path string, readOnly bool) (*journal.Journal, error) {
	fi, err := statFile(path)
	if err != nil {
		return nil, usagef("journal %s: %v", path, err)
	}
	if err := readfile.Check(path); err != nil {
		return nil, usagef("journal %v", err)
	}
	if fi.Size() == 0 {
		return nil, usagef("journal %s is empty (0 bytes): no run was ever recorded in it; start one with 'worker run --journal %s'", path, path)
	}
	j, err := journal.Open(ctx, path, journal.Config{ReadOnly: readOnly})
	if err != nil {
		return nil, journalError(err)
	}
	return j, nil
}

// journalError is the error of a journal that cannot be opened: exit 2,
// and for a busy journal the reason in words.
func journalError(err error) error {
	if errors.Is(err, journal.ErrBusy) {
		return usagef("%w: another worker process runs, resumes or prunes it (through this path or another one to the same file)", err)
	}
	return &usageError{err}
}

// pickRun returns id if set, else the last run that has not finished.
func pickRun(ctx context.Context, j *journal.Journal, id journal.RunID) (journal.RunID, error) {
	if id != 0 {
		if _, err := j.Run(ctx, id); err != nil {
			return 0, &usageError{err}
		}
		return id, nil
	}
	runs, err := j.Runs(ctx)
	if err != nil {
		return 0, err
	}
	if len(runs) == 0 {
		return 0, usagef("no run is recorded in %s (the worker stopped before it recorded one); nothing to resume: start one with 'worker run'", j.Path())
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Status != nightshift.RunDone {
			return runs[i].ID, nil
		}
		tasks, err := j.Tasks(ctx, runs[i].ID)
		if err != nil {
			return 0, err
		}
		for _, t := range tasks {
			if t.Finished && t.Status == nightshift.RuleUnreachable {
				return runs[i].ID, nil // its unreachable hosts are tried again
			}
		}
	}
	return 0, usagef("every run of %s is done, no host unreachable; nothing to resume (pick one with --run)", j.Path())
}
