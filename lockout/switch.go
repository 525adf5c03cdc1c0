package lockout

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	nightshift "github.com/nightshift-dev/nightshift"
)

// Trigger is what fires an armed switch on the host.
type Trigger string

// Triggers.
const (
	// TriggerSystemd: a transient systemd timer (systemd-run
	// --on-active), where systemd runs as PID 1.
	TriggerSystemd Trigger = "systemd"
	// TriggerDetached: a sleeper in its own session (setsid, nohup, no
	// descriptor of the SSH session), elsewhere.
	TriggerDetached Trigger = "detached"
)

// State is where a switch is on the host.
type State string

// States.
const (
	StateArmed    State = "armed"    // waiting for Disarm or its deadline
	StateDisarmed State = "disarmed" // Disarm came first; nothing was restored
	StateFired    State = "fired"    // its deadline came first; restoring
	StateRestored State = "restored" // fired, and the restore has finished
	StateLost     State = "lost"     // its trigger vanished (the host rebooted) before either
)

// ArmOptions say what an armed switch restores when it fires.
type ArmOptions struct {
	// Restore is a shell command run first when the switch fires, for
	// example the sandbox's undo of the commit being guarded. Empty: none.
	Restore string
	// Snapshot is restored next. Nil: Arm takes one itself, which is
	// right when Arm is called before the change it guards (as it must
	// be).
	Snapshot *Snapshot
	// ID names the switch; empty means a fresh one. Arming an ID that is
	// already armed is ErrArmed.
	ID string
	// Deadline overrides the Guard's Deadline for this switch.
	Deadline time.Duration
	// FilesOnly says the change guarded only changes files: it runs no
	// program that could have reloaded sshd (the sandbox's commit without
	// recorded actions). Protect's undo through the kept connection then
	// restarts sshd only when the change touched /etc/ssh, so that an
	// earlier change that bites only at sshd's next restart is not made
	// live by the undo of an unrelated one. False: sshd is always
	// restarted after an undo. A fired switch always restarts it.
	FilesOnly bool
}

// Switch is an armed dead-man switch on a host.
type Switch struct {
	ID  string
	Dir string
	// Trigger is what will fire it; Deadline is when, by this machine's
	// clock (estimated as the time Arm was called plus the deadline).
	Trigger  Trigger
	Deadline time.Time
	// Snapshot is what it restores: ArmOptions.Snapshot, or the one Arm
	// took (removed by Disarm). Guard.Restore takes it, to undo through
	// the kept connection what the switch would.
	Snapshot *Snapshot
}

// Arm arms a dead-man switch on the host before a change is committed.
// Unless Disarm reaches the host first, when the deadline passes the host
// itself runs opts.Restore, restores the snapshot (the protected files and
// the firewall rulesets) and brings sshd back: sshd -t, then a restart of
// ssh.service (or sshd.service) where systemd runs, else a stop of the
// running daemon (from /run/sshd.pid) and a start of it. The switch lives on
// the host: a worker killed with SIGKILL or a dropped connection is
// covered. One round trip.
//
// Only one switch is armed per host at a time: Arm returns an *ArmedError
// while another switch has not been disarmed or fired (a switch past its
// deadline by 30 s that never fired is recorded as lost and ignored).
func (g *Guard) Arm(ctx context.Context, r nightshift.Runner, opts ArmOptions) (*Switch, error) {
	id := opts.ID
	if id == "" {
		id = newID()
	}
	if !plainID.MatchString(id) {
		return nil, fmt.Errorf("%w: switch ID %q is not plain characters", ErrConfig, id)
	}
	deadline := opts.Deadline
	if deadline == 0 {
		deadline = g.cfg.Deadline
	}
	if deadline < 100*time.Millisecond {
		return nil, fmt.Errorf("%w: deadline %v is below 100ms", ErrConfig, deadline)
	}
	snap := ""
	if opts.Snapshot != nil {
		if !plainPath.MatchString(opts.Snapshot.Dir) {
			return nil, fmt.Errorf("%w: snapshot directory %q", ErrConfig, opts.Snapshot.Dir)
		}
		snap = opts.Snapshot.Dir
	}
	var b strings.Builder
	b.WriteString("set -e\nbase=" + g.baseExpr() + "\nd=\"$base/switch/" + id + "\"\n")
	b.WriteString("if [ -f \"$d/armed\" ]; then echo EXISTS; exit 0; fi\n")
	b.WriteString("umask 077\nmkdir -p \"$d\"\n")
	for _, f := range []struct{ name, body string }{
		{"restore.cmd", opts.Restore}, {"snapshot.sh", script("snapshot.sh")},
		{"restore.sh", script("restore.sh")}, {"sshd.sh", script("sshd.sh")}, {"fire.sh", script("fire.sh")},
	} {
		b.WriteString("printf '%s\\n' " + quote(f.body) + " >\"$d/" + f.name + "\"\n")
	}
	if opts.Restore == "" {
		b.WriteString(": >\"$d/restore.cmd\"\n")
	}
	b.WriteString("sh -c " + quote(script("arm.sh")) + " sh \"$base\" " + id + " " + quote(g.cfg.User) + " " +
		strconv.FormatInt(deadline.Milliseconds(), 10) + " " + quote(snap) + "\n")
	b.WriteString("echo \"DIR $d\"\n")
	start := time.Now()
	out, err := run(ctx, r, "arm", b.String())
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	s := &Switch{ID: id, Deadline: start.Add(deadline)}
	for _, l := range lines {
		switch {
		case l == "EXISTS":
			return nil, fmt.Errorf("%w: switch ID %s was armed before on the host; IDs are single-use", ErrArmed, id)
		case strings.HasPrefix(l, "BUSY "):
			return nil, &ArmedError{ID: strings.TrimPrefix(l, "BUSY ")}
		case strings.HasPrefix(l, "ARMED "):
			s.Trigger = Trigger(strings.TrimPrefix(l, "ARMED "))
		case strings.HasPrefix(l, "DIR "):
			s.Dir = strings.TrimPrefix(l, "DIR ")
		}
	}
	if s.Trigger != TriggerSystemd && s.Trigger != TriggerDetached || s.Dir == "" {
		return nil, &HostError{Op: "arm", Output: "unexpected output: " + strings.TrimSpace(out)}
	}
	s.Snapshot = opts.Snapshot
	if s.Snapshot == nil {
		s.Snapshot = &Snapshot{ID: id, Dir: s.Dir + "/pre"}
	}
	return s, nil
}

// Disarm disarms the switch: the change it guarded stays. It is
// idempotent: disarming a disarmed switch returns nil. When the switch
// fired first it returns an error matching ErrFired, every time: the
// change was undone on the host. One round trip.
func (g *Guard) Disarm(ctx context.Context, r nightshift.Runner, s *Switch) error {
	if s == nil || !plainID.MatchString(s.ID) {
		return fmt.Errorf("%w: no switch to disarm", ErrConfig)
	}
	out, err := run(ctx, r, "disarm", `sh -c `+quote(script("disarm.sh"))+` sh "`+g.baseExpr()+`" `+s.ID)
	if err != nil {
		return err
	}
	switch l := lastLine(out); {
	case l == "DISARMED":
		return nil
	case l == "UNKNOWN":
		return fmt.Errorf("%w: %s", ErrUnknownSwitch, s.ID)
	case strings.HasPrefix(l, "FIRED "):
		return fmt.Errorf("%w: switch %s is %s", ErrFired, s.ID, strings.TrimPrefix(l, "FIRED "))
	default:
		return &HostError{Op: "disarm", Output: "unexpected output: " + l}
	}
}

// State reads the switch's state on the host, and the log of its restore
// when it fired.
func (g *Guard) State(ctx context.Context, r nightshift.Runner, s *Switch) (State, string, error) {
	if s == nil || !plainID.MatchString(s.ID) {
		return "", "", fmt.Errorf("%w: no switch", ErrConfig)
	}
	cmd := `d="` + g.baseExpr() + `/switch/` + s.ID + `"; [ -f "$d/armed" ] || { echo UNKNOWN; exit 0; }; cat "$d/fire.log" 2>/dev/null; echo "STATE $(cat "$d/state")"`
	out, err := run(ctx, r, "state", cmd)
	if err != nil {
		return "", "", err
	}
	l := lastLine(out)
	if l == "UNKNOWN" {
		return "", "", fmt.Errorf("%w: %s", ErrUnknownSwitch, s.ID)
	}
	st, ok := strings.CutPrefix(l, "STATE ")
	if !ok {
		return "", "", &HostError{Op: "state", Output: "unexpected output: " + l}
	}
	log := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(out), l))
	switch State(st) {
	case StateArmed, StateDisarmed, StateFired, StateRestored, StateLost:
		return State(st), log, nil
	default:
		return "", log, &HostError{Op: "state", Output: "unknown state " + st}
	}
}
