package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift/rules"
)

// rulesDigest is what a run records of its rules, to notice a resume with
// different ones: each rule's ID and a digest of everything the worker
// gives the model or runs for it (title, description, check, bans, hints,
// max_attempts — not where in the file it is).
func rulesDigest(rs []rules.Rule) map[string]string {
	out := make(map[string]string, len(rs))
	for _, r := range rs {
		var kind, check string
		if r.Check != nil {
			kind, check = r.Check.Kind(), r.Check.String()
		}
		b, _ := json.Marshal([]any{r.Title, r.Description, kind, check, r.Banned, r.Hints, r.MaxAttempts})
		sum := sha256.Sum256(b)
		out[r.ID] = hex.EncodeToString(sum[:12])
	}
	return out
}

// rulesChanged says how the rules now (rs) differ from those a run
// recorded (was): each rule changed, removed or added, by ID; "" when
// they are the same.
func rulesChanged(was map[string]string, rs []rules.Rule) string {
	now := rulesDigest(rs)
	pos := map[string]string{}
	for _, r := range rs {
		pos[r.ID] = r.Pos.String()
	}
	var changes []string
	for id, d := range now {
		switch w, ok := was[id]; {
		case !ok:
			changes = append(changes, fmt.Sprintf("%s added (%s)", id, pos[id]))
		case w != d:
			changes = append(changes, fmt.Sprintf("%s changed (%s)", id, pos[id]))
		}
	}
	for id := range was {
		if _, ok := now[id]; !ok {
			changes = append(changes, id+" removed")
		}
	}
	slices.Sort(changes)
	return strings.Join(changes, "; ")
}
