package lockout

// AccessChange is a rule whose required change must lock the worker's own
// login out: the worker ends it needs_access_change with this, never fixed.
type AccessChange struct {
	// Rule is the rule's ID.
	Rule string
	// Change is the exact change the rule requires.
	Change string
	// Reason says why it locks the worker out and what the team must do.
	Reason string
}

// accessRule is one rule whose fix locks out logins that lockedOut says.
type accessRule struct {
	change    string
	lockedOut func(user string) bool
	why       string
}

// accessRules are the SSG rules (as their IDs end; the xccdf prefix is
// ignored) whose required change locks out some worker logins whatever
// command carries it out.
var accessRules = map[string]accessRule{
	"sshd_disable_root_login": {
		change:    "PermitRootLogin no in /etc/ssh/sshd_config",
		lockedOut: func(u string) bool { return u == "root" },
		why:       "the worker logs in as root; with PermitRootLogin no sshd refuses that login at its next restart, so the fleet would be unreachable after the next reboot. Provision a non-root login with sudo for the worker (README: \"A non-root login for the worker\") and run the rule again with it",
	},
	"sshd_disable_pubkey_auth": {
		change:    "PubkeyAuthentication no in /etc/ssh/sshd_config",
		lockedOut: func(string) bool { return true },
		why:       "the worker logs in with a key; with PubkeyAuthentication no sshd refuses every key login at its next restart. The rule cannot be fixed while the worker reaches the host by key",
	},
}

// RequiresAccessChange reports whether the rule's required change locks
// out a worker that logs in as user, whatever command carries it out. The
// worker then ends the rule needs_access_change with the returned change
// and reason instead of letting the model try. rule may carry SSG's
// "xccdf_org.ssgproject.content_rule_" prefix.
func RequiresAccessChange(rule, user string) (AccessChange, bool) {
	id := rule
	const prefix = "xccdf_org.ssgproject.content_rule_"
	if len(id) > len(prefix) && id[:len(prefix)] == prefix {
		id = id[len(prefix):]
	}
	r, ok := accessRules[id]
	if !ok || !r.lockedOut(user) {
		return AccessChange{}, false
	}
	return AccessChange{Rule: rule, Change: r.change, Reason: r.why}, true
}
