package nightshift

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// RecipeKey says where a recipe applies: one rule on one OS family, version
// and package manager. Replay matches keys exactly; an empty field is a value
// like any other (a host whose os-release has no VERSION_ID matches only
// recipes proven on such hosts).
type RecipeKey struct {
	Rule string `json:"rule"`
	// OS is the os-release ID (debian, ubuntu, rhel, …).
	OS string `json:"os"`
	// Version is the os-release VERSION_ID (12, 22.04, 9.4, …).
	Version string `json:"version"`
	// PackageManager is the package manager the probe found (apt-get, dnf, …).
	PackageManager string `json:"package_manager"`
}

// String is "rule on os version (package manager)", for messages.
func (k RecipeKey) String() string {
	return k.Rule + " on " + strings.TrimSpace(k.OS+" "+k.Version) + " (" + k.PackageManager + ")"
}

// RecipeState is where a recipe stands for its key. The zero value,
// RecipeActive, is replayed when it is the best of its key.
type RecipeState uint8

// The recipe states.
const (
	// RecipeActive: proven, replayed when it ranks first for its key.
	RecipeActive RecipeState = iota
	// RecipePinned: chosen by an operator; replayed before any active
	// recipe of its key, demoted like any other when it fails.
	RecipePinned
	// RecipeDemoted: it failed on a host of its key; never replayed there
	// again (an operator may pin it back).
	RecipeDemoted
	// RecipeRetired: withdrawn by an operator; never replayed, kept for
	// the record.
	RecipeRetired
)

var recipeStateNames = []string{"active", "pinned", "demoted", "retired"}

func (s RecipeState) String() string { return enumText("RecipeState", recipeStateNames, uint8(s)) }

// MarshalText implements encoding.TextMarshaler.
func (s RecipeState) MarshalText() ([]byte, error) {
	return enumMarshal("RecipeState", recipeStateNames, uint8(s))
}

// UnmarshalText implements encoding.TextUnmarshaler; unknown names are an
// error wrapping ErrUnknownValue.
func (s *RecipeState) UnmarshalText(b []byte) error {
	x, err := enumParse("RecipeState", recipeStateNames, b)
	*s = RecipeState(x)
	return err
}

// Replayable reports whether recipes in this state may be replayed.
func (s RecipeState) Replayable() bool { return s == RecipeActive || s == RecipePinned }

// RecipeCheck is a rule's check as a shell command run as root: exit 0
// means compliant.
type RecipeCheck struct {
	Command string `json:"command"`
	// Failing are the exit statuses meaning "not compliant" (oscap xccdf
	// eval: 2). Empty means 1 to 125, a shell check's. Any other status is
	// a check error.
	Failing []int `json:"failing,omitempty"`
}

// RecipeProof is one host on which a recipe's commands fixed its rule.
type RecipeProof struct {
	Host string `json:"host"`
	// Run names the night: a journal's run number or a fleet night's ID.
	Run string    `json:"run"`
	At  time.Time `json:"at"`
	// Check is the re-check's result line after the last command.
	Check string `json:"check,omitempty"`
	// Changes are the files the commands changed, where a sandbox recorded
	// them (diffs capped as in Evidence).
	Changes []FileChange `json:"changes,omitempty"`
	// Replayed is true when the proof comes from a replay of the recipe
	// rather than from the model's attempt that first found it.
	Replayed bool `json:"replayed,omitempty"`
}

// Recipe is a fix proven on a host: the commands of the passing attempt, in
// order, as they ran after the safety check, with where they apply and what
// proves them.
type Recipe struct {
	// ID names the recipe: RecipeID of its key's rule and its commands.
	ID       string    `json:"id"`
	Key      RecipeKey `json:"key"`
	Commands []string  `json:"commands"`
	// Check is the rule's check as a command, which exports guard the
	// commands with.
	Check RecipeCheck `json:"check"`
	State RecipeState `json:"state"`
	// Fixes counts the hosts it fixed (the first proof included); Failures
	// the replays that did not fix the rule.
	Fixes    int `json:"fixes"`
	Failures int `json:"failures"`
	// LastError says why the last failed replay failed.
	LastError string `json:"last_error,omitempty"`
	// Proofs are the hosts it fixed, oldest first (a store may keep only
	// the first ones).
	Proofs  []RecipeProof `json:"proofs,omitempty"`
	Created time.Time     `json:"created"`
	Updated time.Time     `json:"updated"`
}

// RecipeID is the identity of a recipe: the rule and its commands, hashed.
// The same commands proven for the same rule on another key share the ID;
// stores keep one recipe per (ID, key).
func RecipeID(rule string, commands []string) string {
	h := sha256.New()
	h.Write([]byte(rule))
	for _, c := range commands {
		h.Write([]byte{0})
		h.Write([]byte(c))
	}
	return "r-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// RecipeOutcome is what a replay of a recipe did on a host.
type RecipeOutcome struct {
	Recipe string    `json:"recipe"`
	Key    RecipeKey `json:"key"`
	// Fixed is true when the re-check passed after the recipe's commands.
	Fixed bool `json:"fixed"`
	// Reason says why it did not fix the rule (a refused command, an exit
	// status, the re-check's line).
	Reason string `json:"reason,omitempty"`
}
