package nightshift

// ActionOf is what became of a command a Runner started, from what Run
// returned: ActionUnknown when it returned an error (the outcome is not
// known), ActionTimedOut when the runner stopped the command at its
// deadline, else ActionRan. The worker, batch's journal and fleet's report
// all classify a command with it.
func ActionOf(ex Exec, err error) Action {
	switch {
	case err != nil:
		return ActionUnknown
	case ex.TimedOut:
		return ActionTimedOut
	case ex.Evidence != nil && ex.Evidence.Verdict != VerdictCommitted && ex.Evidence.Verdict != VerdictNone:
		// The sandbox ran it; nothing (or, rolled back, nothing lasting)
		// reached the host.
		return ActionBlocked
	default:
		return ActionRan
	}
}
