package nightshift

import (
	"fmt"
	"strings"
)

// Change is what a command did to one path.
type Change uint8

// The changes.
const (
	// ChangeNone: nothing (the zero value; never in an Effects).
	ChangeNone Change = iota
	// ChangeCreated: the path did not exist before.
	ChangeCreated
	// ChangeModified: the path's contents, type or link target changed
	// (its mode and owner may have changed too).
	ChangeModified
	// ChangeDeleted: the path (and, for a directory, all under it) is gone.
	ChangeDeleted
	// ChangeMeta: only the mode or the owner changed.
	ChangeMeta
)

var changeNames = []string{"none", "created", "modified", "deleted", "meta"}

func (c Change) String() string { return enumText("Change", changeNames, uint8(c)) }

// MarshalText implements encoding.TextMarshaler.
func (c Change) MarshalText() ([]byte, error) { return enumMarshal("Change", changeNames, uint8(c)) }

// UnmarshalText implements encoding.TextUnmarshaler; unknown names are an
// error wrapping ErrUnknownValue.
func (c *Change) UnmarshalText(b []byte) error {
	v, err := enumParse("Change", changeNames, b)
	*c = Change(v)
	return err
}

// FileKind is the type of a file system entry.
type FileKind uint8

// The kinds.
const (
	FileNone FileKind = iota // absent
	FileRegular
	FileDir
	FileSymlink
	FileDevice // a character or block device node
	FileOther  // a FIFO or a socket
)

var fileKindNames = []string{"none", "file", "dir", "symlink", "device", "other"}

func (k FileKind) String() string { return enumText("FileKind", fileKindNames, uint8(k)) }

// MarshalText implements encoding.TextMarshaler.
func (k FileKind) MarshalText() ([]byte, error) {
	return enumMarshal("FileKind", fileKindNames, uint8(k))
}

// UnmarshalText implements encoding.TextUnmarshaler; unknown names are an
// error wrapping ErrUnknownValue.
func (k *FileKind) UnmarshalText(b []byte) error {
	v, err := enumParse("FileKind", fileKindNames, b)
	*k = FileKind(v)
	return err
}

// FileState is one side of a FileChange.
type FileState struct {
	Kind FileKind `json:"kind"`
	// Mode holds the permission bits with setuid, setgid and sticky
	// (07777).
	Mode uint32 `json:"mode"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
	Size int64  `json:"size"`
	// SHA256 is the hex digest of a regular file's contents.
	SHA256 string `json:"sha256,omitempty"`
	// Target is a symlink's target.
	Target string `json:"target,omitempty"`
}

// FileChange is one path a command created, changed or deleted.
type FileChange struct {
	Path   string    `json:"path"`
	Change Change    `json:"change"`
	Before FileState `json:"before"`
	After  FileState `json:"after"`
	// Entries counts what a deleted directory held (all levels).
	Entries int `json:"entries,omitempty"`
	// Diff is a unified diff of a text file's contents (capped); empty for
	// binaries, whose hashes tell the change.
	Diff string `json:"diff,omitempty"`
}

// RecordedAction is one call of a program that changes the running system
// beyond files (systemctl, sysctl -w, nft, reboot, …), recorded in the
// sandbox instead of run: its literal argv.
type RecordedAction struct {
	Argv []string `json:"argv"`
	// Exit is the exit status when the action was run for real on commit;
	// nil when it was not run.
	Exit *int `json:"exit,omitempty"`
	// Output is what it printed when run (capped).
	Output string `json:"output,omitempty"`
}

// String is the argv joined with spaces (arguments with blanks quoted).
func (a RecordedAction) String() string {
	parts := make([]string, len(a.Argv))
	for i, s := range a.Argv {
		if s == "" || strings.ContainsAny(s, " \t\n'\"\\$`") {
			s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
		parts[i] = s
	}
	return strings.Join(parts, " ")
}

// Effects is what one command did, as the recording sandbox saw it.
type Effects struct {
	Changes []FileChange     `json:"changes,omitempty"`
	Actions []RecordedAction `json:"actions,omitempty"`
	// SSHD is sshd's view of the changed configuration, evaluated in the
	// sandbox after the command; nil when the command did not touch
	// /etc/ssh (or the host has no sshd).
	SSHD *SSHDCheck `json:"sshd,omitempty"`
	// Parses are the syntax checks of the configurations the command
	// changed, each run by the configuration's own program (visudo -c,
	// apt-config dump, …) on the host's files and on the trial's; nil when
	// the command changed none of them.
	Parses []ConfigParse `json:"parses,omitempty"`
	// PAM is what Linux-PAM reads for a login, before and after the
	// command; nil when the command changed none of it (/etc/pam.d,
	// /etc/security, /etc/securetty, /etc/nologin, a module directory, a
	// file a PAM line names). It is not kept in the JSON evidence (it is the host's whole
	// PAM configuration, tens of kilobytes, and the same for every
	// command): the judge reads it when it judges.
	PAM *PAMView `json:"-"`
	// Shadows maps each program the command created or changed in
	// /usr/local/sbin or /usr/local/bin to the system program of the same
	// name in /usr/sbin, /usr/bin, /sbin or /bin that it hides in root's
	// PATH.
	Shadows map[string]string `json:"shadows,omitempty"`
	// Origin is the worker's address as sshd on the host sees it (from
	// the session's SSH_CONNECTION); "" when unknown.
	Origin string `json:"origin,omitempty"`
}

// PAMView is the PAM configuration of the host as the sandbox read it in
// the trial's view, before the command (the host's own files) and after it.
type PAMView struct {
	Before PAMState
	After  PAMState
	// Login is the worker's login user as the sandbox saw it (SUDO_USER
	// or the user running the helper); Groups maps it and root to the
	// names of their groups.
	Login  string
	Groups map[string][]string
}

// PAMState is one side of a PAMView.
type PAMState struct {
	// Files maps a path to its contents (each cut at 4,000 lines): every
	// file in /etc/pam.d; /etc/security's access.conf, time.conf,
	// limits.conf, group.conf and limits.d/*.conf; /etc/securetty;
	// /etc/nologin; and the files PAM lines name with file=, accessfile=
	// or conffile=. An absent file is not listed.
	Files map[string]string
	// Modules maps each module a PAM line names (as named: pam_unix.so or
	// an absolute path) to whether the host has it.
	Modules map[string]bool
}

// SSHDCheck is `sshd -t` and `sshd -T -C user=LOGIN,host=ADDR,addr=ADDR`
// run on the configuration a command left.
type SSHDCheck struct {
	// Login is the user the worker logs in as.
	Login string `json:"login"`
	// TestOK is whether `sshd -t` accepted the configuration; TestOutput
	// is what it printed.
	TestOK     bool   `json:"test_ok"`
	TestOutput string `json:"test_output,omitempty"`
	// Effective holds `sshd -T`'s keywords (lower case) and values for the
	// worker's login; empty when sshd -T failed.
	Effective map[string]string `json:"effective,omitempty"`
}

// ConfigParse is one configuration's syntax check by its own program, run
// on the host's view before the command and on the trial's after it.
type ConfigParse struct {
	// Program is the check as run ("visudo -c"); File the configuration
	// it reads ("/etc/sudoers", with its includes).
	Program string `json:"program"`
	File    string `json:"file"`
	// BeforeOK: the host's configuration parsed (true too when the host
	// has no such program: nothing read it). BeforeMessage is what the
	// program printed when it did not.
	BeforeOK      bool   `json:"before_ok"`
	BeforeMessage string `json:"before_message,omitempty"`
	// AfterOK: the trial's configuration parsed. Message is what the
	// program printed when it did not (its first lines).
	AfterOK bool   `json:"after_ok"`
	Message string `json:"message,omitempty"`
	// Skipped says why the trial's side was not checked (AfterOK is then
	// false and means nothing); "" when it was.
	Skipped string `json:"skipped,omitempty"`
}

// Broken reports whether the command left the configuration its program no
// longer accepts: it parsed before and fails after.
func (c ConfigParse) Broken() bool { return c.Skipped == "" && c.BeforeOK && !c.AfterOK }

// Empty reports whether the command changed nothing and recorded nothing.
func (e Effects) Empty() bool { return len(e.Changes) == 0 && len(e.Actions) == 0 }

// Verdict is what became of a command's effects.
type Verdict uint8

// The verdicts.
const (
	// VerdictNone: no sandbox judged the command (the zero value).
	VerdictNone Verdict = iota
	// VerdictCommitted: the effects were judged and applied to the host.
	VerdictCommitted
	// VerdictRefused: the judge refused the effects; nothing was applied.
	VerdictRefused
	// VerdictConflict: the host changed a path between the sandbox and the
	// commit; nothing was applied.
	VerdictConflict
	// VerdictDiscarded: the command timed out or failed in the sandbox;
	// nothing was applied.
	VerdictDiscarded
	// VerdictRolledBack: applied, then undone (the canary failed).
	VerdictRolledBack
)

var verdictNames = []string{"none", "committed", "refused", "conflict", "discarded", "rolled_back"}

func (v Verdict) String() string { return enumText("Verdict", verdictNames, uint8(v)) }

// MarshalText implements encoding.TextMarshaler.
func (v Verdict) MarshalText() ([]byte, error) {
	return enumMarshal("Verdict", verdictNames, uint8(v))
}

// UnmarshalText implements encoding.TextUnmarshaler; unknown names are an
// error wrapping ErrUnknownValue.
func (v *Verdict) UnmarshalText(b []byte) error {
	x, err := enumParse("Verdict", verdictNames, b)
	*v = Verdict(x)
	return err
}

// Evidence is the record of one command judged by its effects: what it did
// in the sandbox, what the judge decided and why.
type Evidence struct {
	// Trial identifies the sandbox run on its host (and its pre-images,
	// for undo).
	Trial   string  `json:"trial"`
	Verdict Verdict `json:"verdict"`
	Effects Effects `json:"effects"`
	// Reasons say why the effects were refused, or why the commit did not
	// happen.
	Reasons []string `json:"reasons,omitempty"`
	// Lockout is set when a reason is that the effects would lock the
	// worker's own login out (now or at sshd's next restart).
	Lockout bool `json:"lockout,omitempty"`
	// Fallback is set when no sandbox ran: why, and what judged instead.
	Fallback string `json:"fallback,omitempty"`
}

// Summary is the short form the model and the one-line history get:
// "changed /etc/ssh/sshd_config: -PermitRootLogin yes +PermitRootLogin no;
// will run: systemctl reload ssh".
func (e Effects) Summary(maxLen int) string {
	var parts []string
	for _, c := range e.Changes {
		switch c.Change {
		case ChangeCreated:
			parts = append(parts, "created "+c.Path+diffGist(c.Diff))
		case ChangeModified:
			parts = append(parts, "changed "+c.Path+diffGist(c.Diff))
		case ChangeDeleted:
			s := "deleted " + c.Path
			if c.Entries > 0 {
				s += fmt.Sprintf(" (%d entries)", c.Entries)
			}
			parts = append(parts, s)
		case ChangeMeta:
			parts = append(parts, fmt.Sprintf("mode/owner of %s %04o %d:%d -> %04o %d:%d", c.Path,
				c.Before.Mode, c.Before.UID, c.Before.GID, c.After.Mode, c.After.UID, c.After.GID))
		case ChangeNone:
		default:
			// Every Change value is listed above.
		}
	}
	if len(e.Actions) > 0 {
		acts := make([]string, len(e.Actions))
		for i, a := range e.Actions {
			acts[i] = a.String()
		}
		parts = append(parts, "will run: "+strings.Join(acts, ", "))
	}
	if len(parts) == 0 {
		return "changed nothing"
	}
	s := strings.Join(parts, "; ")
	if maxLen > 0 && len(s) > maxLen {
		cut := maxLen - len("… (+N more)")
		n := strings.Count(s[cut:], "; ") + 1
		s = strings.ToValidUTF8(s[:cut], "") + fmt.Sprintf("… (+%d more)", n)
	}
	return s
}

// diffGist is ": -old +new" from a unified diff's first changed lines.
func diffGist(diff string) string {
	var minus, plus []string
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-") && len(minus) < 2:
			minus = append(minus, "-"+strings.TrimSpace(l[1:]))
		case strings.HasPrefix(l, "+") && len(plus) < 2:
			plus = append(plus, "+"+strings.TrimSpace(l[1:]))
		}
	}
	if len(minus)+len(plus) == 0 {
		return ""
	}
	g := strings.Join(append(minus, plus...), " ")
	if len(g) > 160 {
		g = strings.ToValidUTF8(g[:157], "") + "…"
	}
	return ": " + g
}
