// Package recipes keeps the fixes a night proved, so that the next host of the
// same kind gets the fix without the model.
//
// When a rule is fixed on a host, the commands of the passing attempt, in
// order and as they ran after the safety check, are proved into a Store
// under the rule's key (nightshift.RecipeKey: rule, OS family and version,
// package manager) with the evidence (host, night, the re-check's line, the
// files changed). The same commands proving the same key again add a proof
// and confidence (Fixes). Before calling the model on a later host of that
// key, the worker replays the Best recipe through the same safety check,
// sandbox, lockout net and re-check as the model's commands; a replay that
// does not fix the rule is recorded with Fail, which demotes the recipe for
// that key: it is never replayed there again unless an operator pins it.
//
// Ranking (Best): replayable recipes of the exact key only (pinned before
// active), then most fixes, fewest failures, oldest first, then ID: the same
// store gives the same answer every time, in both implementations.
//
// Stores: Memory (in process, for tests and one-shot runs) and SQLite (its
// own tables, recipes and recipes_schema, in a journal's file through the
// journal's single writer, or in a file of its own), which any number of
// processes may share. Export writes a store's recipes as an Ansible playbook
// (one task file per rule, every task guarded by the rule's check) or a shell
// script, byte for byte the same for the same recipes.
//
// Errors: ErrInvalid for a key without a rule or a recipe without commands,
// ErrNotFound for an unknown recipe ID, ErrSchema for a SQLite file with a
// newer recipes schema; store errors are wrapped with the operation that
// failed. Nothing panics on bad input.
//
// Concurrency: Memory and SQLite are safe for concurrent use; Prove and Fail
// of one key are serialized, so concurrent hosts never lose a proof.
package recipes
