package sandbox

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/textcut"
)

// ActionOutputCap bounds the output kept of one action run on commit.
const ActionOutputCap = 4 << 10

// Commit applies a trial's file changes to the host's real file systems,
// file by file and atomically (written beside, then renamed over), keeping
// each pre-image under /var/lib/nightshift/undo/ID for Undo. Before
// anything changes, every path is checked against the state the sandbox
// saw: a path the host changed in between stops the whole commit with a
// *ConflictError, and nothing is applied. The trial's recorded actions are
// not run here: run the approved ones with RunActions.
func (s *Sandbox) Commit(ctx context.Context, t *Trial) error {
	if err := s.install(ctx); err != nil {
		return err
	}
	var in strings.Builder
	for _, o := range t.ops {
		for _, f := range []string{o.Op, o.N, o.Rel, o.Expect, o.Meta} {
			in.WriteString(f)
			in.WriteByte(0)
		}
	}
	ex, err := s.r.Run(ctx, s.stdinCommand("commit "+t.ID, in.String()))
	if err != nil {
		return fmt.Errorf("sandbox commit %s: %w", t.ID, err)
	}
	return s.result("commit", t.ID, ex)
}

// Undo restores the pre-images of a committed trial, last change first,
// after checking that every path still holds what the commit left there;
// a path changed since is a *ConflictError and nothing is restored. Undo
// restores files only: services the trial's actions restarted are not
// restarted again.
func (s *Sandbox) Undo(ctx context.Context, id string) error {
	if err := s.install(ctx); err != nil {
		return err
	}
	ex, err := s.r.Run(ctx, "bash "+quote(s.helper)+" undo "+quote(id))
	if err != nil {
		return fmt.Errorf("sandbox undo %s: %w", id, err)
	}
	return s.result("undo", id, ex)
}

// UndoCommand is the shell command that undoes trial id on the host (what
// a dead-man switch runs first when it fires).
func (s *Sandbox) UndoCommand(id string) string {
	return "bash " + quote(s.helper) + " undo " + quote(id)
}

// Discard drops a trial's layers; nothing of it reaches the host.
func (s *Sandbox) Discard(ctx context.Context, t *Trial) error {
	if err := s.install(ctx); err != nil {
		return err
	}
	ex, err := s.r.Run(ctx, "bash "+quote(s.helper)+" discard "+quote(t.ID))
	if err != nil {
		return fmt.Errorf("sandbox discard %s: %w", t.ID, err)
	}
	if ex.ExitCode != 0 {
		return fmt.Errorf("%w: discard %s: exit %d: %s", ErrHelper, t.ID, ex.ExitCode, firstLine(ex.Stderr))
	}
	return nil
}

// RunActions runs approved recorded actions on the host, in order, as
// their literal argv (each argument quoted: no shell expansion), and
// returns them with their exit status and output. It stops at a transport
// error; a failing action is recorded and the next one still runs.
func (s *Sandbox) RunActions(ctx context.Context, acts []nightshift.RecordedAction) ([]nightshift.RecordedAction, error) {
	out := make([]nightshift.RecordedAction, len(acts))
	copy(out, acts)
	for i, a := range out {
		q := make([]string, len(a.Argv))
		for j, arg := range a.Argv {
			q[j] = quote(arg)
		}
		ex, err := s.r.Run(ctx, strings.Join(q, " ")+" 2>&1")
		if err != nil {
			return out[:i], fmt.Errorf("run %s: %w", a.String(), err)
		}
		code := ex.ExitCode
		out[i].Exit = &code
		out[i].Output, _ = textcut.Middle(ex.Stdout, ActionOutputCap)
	}
	return out, nil
}

// stdinCommand runs the helper with data on its standard input (base64 in
// a here-document: NULs and any bytes survive).
func (s *Sandbox) stdinCommand(args, data string) string {
	enc := base64.StdEncoding.EncodeToString([]byte(data))
	var b strings.Builder
	b.WriteString("base64 -d <<'NIGHTSHIFT_DATA' | bash " + quote(s.helper) + " " + args + "\n")
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	b.WriteString(enc + "\nNIGHTSHIFT_DATA")
	return b.String()
}

// result maps the helper's answer to commit or undo: exit 3 lists
// conflicts, anything else but 0 is ErrHelper.
func (s *Sandbox) result(opName, id string, ex nightshift.Exec) error {
	switch ex.ExitCode {
	case 0:
		return nil
	case 4:
		return fmt.Errorf("%w: %s", ErrUndone, id)
	case 3:
		recs, err := fields([]byte(ex.Stdout), 4, opName+" conflicts")
		if err != nil {
			return err
		}
		ce := &ConflictError{Op: opName}
		for _, r := range recs {
			ce.Conflicts = append(ce.Conflicts, Conflict{Path: r[1], Want: r[2], Got: r[3]})
		}
		return ce
	default:
		return fmt.Errorf("%w: %s %s: exit %d: %s", ErrHelper, opName, id, ex.ExitCode, firstLine(ex.Stderr))
	}
}
