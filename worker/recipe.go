package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/safety"
)

// RecipeStore is where the worker finds the fixes other hosts proved and
// proves its own: a recipes.Store.
type RecipeStore interface {
	Best(ctx context.Context, key nightshift.RecipeKey) (nightshift.Recipe, bool, error)
	Prove(ctx context.Context, fix nightshift.Recipe, proof nightshift.RecipeProof) (nightshift.Recipe, error)
	Fail(ctx context.Context, id string, key nightshift.RecipeKey, reason string) error
}

// Recipes configures replay of proven fixes. The zero value turns recipes
// off: nothing is replayed or proved.
type Recipes struct {
	// Store finds and keeps recipes; nil turns recipes off.
	Store RecipeStore
	// Host and Run name this host and this night in the proofs.
	Host, Run string
	// NoReplay proves fixes but never replays one (`--no-recipes`); a
	// rule's own switch is rules.Rule.NoRecipes.
	NoReplay bool
}

// ranCommand is one command of the current attempt that reached the host.
type ranCommand struct {
	command string
	changes []nightshift.FileChange
}

// recipeKey is the key of rule r on the probed host.
func recipeKey(rule string, f *nightshift.HostFacts) nightshift.RecipeKey {
	if f == nil {
		return nightshift.RecipeKey{Rule: rule}
	}
	return nightshift.RecipeKey{Rule: rule, OS: f.ID, Version: f.Version, PackageManager: f.PackageManager}
}

// replay runs the best recipe of the rule's key on the host before the model
// is asked: its commands as one turn of the conversation, through the same
// ban check, sandbox and net as the model's, then the re-check. It reports
// whether the rule is fixed. A recipe that does not fix the rule is demoted
// for the key and its turn stays in the memory: the model's first attempt
// sees what the recipe did and why it failed. Store errors are logged and
// never stop the rule: the model is asked instead.
func (w *Worker) replay(ctx context.Context, r rules.Rule, bans *safety.BanList, mem *memory.Memory, key nightshift.RecipeKey, out *tally) (bool, error) {
	rc := w.cfg.Recipes
	if rc.Store == nil || rc.NoReplay || r.NoRecipes {
		return false, nil
	}
	rec, ok, err := rc.Store.Best(ctx, key)
	if err != nil {
		w.log().Warn("recipe lookup failed; asking the model", "rule", r.ID, "error", err)
		return false, nil
	}
	if !ok {
		return false, nil
	}
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant,
		Content: fmt.Sprintf("Replaying recipe %s, which fixed this rule on %d host(s) of %s %s (%s), before asking the model.",
			rec.ID, rec.Fixes, key.OS, key.Version, key.PackageManager)}
	for i, c := range rec.Commands {
		args, _ := json.Marshal(map[string]string{"command": c})
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: "recipe-" + strconv.Itoa(i+1), Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: nightshift.ToolApply, Arguments: string(args)}})
	}
	out.Recipe, out.RecipeAttempts = rec.ID, out.RecipeAttempts+1
	out.turn, out.turnCheck = nil, ""
	out.replaying = rec.ID
	status, _, err := w.act(ctx, r, bans, 0, mem, msg, out)
	out.replaying = ""
	w.emit(nightshift.Event{Kind: nightshift.EventAttempt, Rule: r.ID, Check: status, Recipe: rec.ID})
	if err != nil {
		return false, err
	}
	if status == nightshift.CheckPass {
		out.Status = nightshift.RuleFixed
		w.prove(ctx, r, key, out, true)
		return true, nil
	}
	reason := out.turnCheck
	if reason == "" {
		reason = "re-check " + status.String()
	}
	if len(out.turn) < len(rec.Commands) {
		reason = fmt.Sprintf("%d of %d commands reached the host; %s", len(out.turn), len(rec.Commands), reason)
	}
	if err := rc.Store.Fail(ctx, rec.ID, key, reason); err != nil {
		w.log().Warn("recording a failed recipe failed", "rule", r.ID, "recipe", rec.ID, "error", err)
	}
	w.log().Info("recipe did not fix the rule; demoted for this key, asking the model", "rule", r.ID, "recipe", rec.ID, "why", reason)
	return false, nil
}

// prove records the current attempt's commands as a recipe of key, guarded
// by r's check.
func (w *Worker) prove(ctx context.Context, r rules.Rule, key nightshift.RecipeKey, out *tally, replayed bool) {
	rc := w.cfg.Recipes
	if rc.Store == nil || len(out.turn) == 0 {
		return
	}
	cmds := make([]string, len(out.turn))
	var changes []nightshift.FileChange
	for i, c := range out.turn {
		// A fix whose text holds a secret (a password hash, a private
		// key) is this host's credential, not a recipe for others; and
		// the store would hold the secret.
		if nightshift.RedactText(c.command) != c.command {
			w.log().Info("the fix holds a secret; not kept as a recipe", "rule", key.Rule)
			return
		}
		cmds[i] = c.command
		changes = append(changes, c.changes...)
	}
	fix := nightshift.Recipe{Key: key, Commands: cmds}
	if r.Check != nil {
		fix.Check.Command = r.Check.String()
		if r.Check.Kind() == "oscap" {
			fix.Check.Failing = []int{2} // oscap xccdf eval: 2 means a rule failed
		}
	}
	rec, err := rc.Store.Prove(ctx, fix, nightshift.RecipeProof{Host: rc.Host, Run: rc.Run, Check: out.turnCheck, Changes: changes, Replayed: replayed})
	if err != nil {
		w.log().Warn("recording a recipe failed", "rule", key.Rule, "error", err)
		return
	}
	out.Recipe = rec.ID
}

// attemptName names an attempt in the model's feedback: 0 is the recipe's.
func attemptName(attempt int) string {
	if attempt == 0 {
		return "the recipe replay"
	}
	return "attempt " + strconv.Itoa(attempt)
}

// checkLine is the re-check's line kept with a recipe.
func checkLine(status nightshift.CheckStatus, exit int, detail string) string {
	s := status.String()
	if detail != "" {
		s += ": " + detail
	} else if status == nightshift.CheckFail {
		s += ": exit " + strconv.Itoa(exit)
	}
	return strings.Join(strings.Fields(s), " ")
}
