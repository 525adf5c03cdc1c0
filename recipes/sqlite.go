package recipes

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/journal"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// schemaVersion is the version of the tables below, kept in recipes_schema
// (the file's user_version belongs to its owner, e.g. package journal).
const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS recipes_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS recipes (
	id              TEXT    NOT NULL,
	rule            TEXT    NOT NULL,
	os              TEXT    NOT NULL,
	version         TEXT    NOT NULL,
	package_manager TEXT    NOT NULL,
	commands        TEXT    NOT NULL, -- JSON array of strings
	check_command   TEXT    NOT NULL DEFAULT '{}', -- JSON of nightshift.RecipeCheck
	state           TEXT    NOT NULL CHECK (state IN ('active', 'pinned', 'demoted', 'retired')),
	fixes           INTEGER NOT NULL DEFAULT 0,
	failures        INTEGER NOT NULL DEFAULT 0,
	last_error      TEXT    NOT NULL DEFAULT '',
	proofs          TEXT    NOT NULL DEFAULT '[]', -- JSON array of nightshift.RecipeProof
	created_ns      INTEGER NOT NULL,
	updated_ns      INTEGER NOT NULL,
	PRIMARY KEY (rule, os, version, package_manager, id)
);
`

const columns = `id, rule, os, version, package_manager, commands, check_command, state, fixes, failures, last_error, proofs, created_ns, updated_ns`

// DB is the database a SQLite store keeps its tables in. A *journal.Journal
// satisfies it: WriteTx on its single writer connection, QueryContext on its
// readers.
type DB interface {
	WriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// SQLite is a Store in a SQLite database, usually a journal's file (the
// store for `worker run` is the journal it writes). It uses only the tables
// recipes and recipes_schema. It is safe for concurrent use, and by several
// processes sharing the file.
type SQLite struct {
	db  DB
	now func() time.Time
}

// NewSQLite returns the recipes store in db, creating its tables when absent.
// now stamps recipes; nil means time.Now.
func NewSQLite(ctx context.Context, db DB, now func() time.Time) (*SQLite, error) {
	if db == nil {
		return nil, errors.New("recipes store: nil database")
	}
	if now == nil {
		now = time.Now
	}
	s := &SQLite{db: db, now: now}
	if err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		return journal.InitTables(ctx, tx, "recipes", schema, schemaVersion, ErrSchema)
	}); err != nil {
		return nil, fmt.Errorf("recipes store: %w", err)
	}
	return s, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanRecipe(sc scanner) (nightshift.Recipe, error) {
	var r nightshift.Recipe
	var cmds, check, state, proofs string
	var created, updated int64
	if err := sc.Scan(&r.ID, &r.Key.Rule, &r.Key.OS, &r.Key.Version, &r.Key.PackageManager, &cmds, &check, &state,
		&r.Fixes, &r.Failures, &r.LastError, &proofs, &created, &updated); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(cmds), &r.Commands); err != nil {
		return r, fmt.Errorf("recipe %s: commands: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(check), &r.Check); err != nil {
		return r, fmt.Errorf("recipe %s: check: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(proofs), &r.Proofs); err != nil {
		return r, fmt.Errorf("recipe %s: proofs: %w", r.ID, err)
	}
	if err := r.State.UnmarshalText([]byte(state)); err != nil {
		return r, fmt.Errorf("recipe %s: %w", r.ID, err)
	}
	r.Created, r.Updated = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	return r, nil
}

func keyArgs(k nightshift.RecipeKey) []any { return []any{k.Rule, k.OS, k.Version, k.PackageManager} }

const whereKey = `rule = ? AND os = ? AND version = ? AND package_manager = ?`

// Prove implements Store.
func (s *SQLite) Prove(ctx context.Context, fix nightshift.Recipe, proof nightshift.RecipeProof) (nightshift.Recipe, error) {
	fix, err := validate(fix)
	if err != nil {
		return nightshift.Recipe{}, fmt.Errorf("prove recipe: %w", err)
	}
	now := s.now().UTC()
	if proof.At.IsZero() {
		proof.At = now
	}
	key, id := fix.Key, fix.ID
	var out nightshift.Recipe
	err = s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		row := tx.QueryRowContext(ctx, `SELECT `+columns+` FROM recipes WHERE `+whereKey+` AND id = ?`, append(keyArgs(key), id)...)
		r, err := scanRecipe(row)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			r = fix
			r.Created = now
		case err != nil:
			return err
		}
		r.Fixes++
		r.Updated = now
		if len(r.Proofs) < MaxProofs {
			r.Proofs = append(r.Proofs, proof)
		}
		out = r
		return upsert(ctx, tx, r)
	})
	if err != nil {
		return nightshift.Recipe{}, fmt.Errorf("prove recipe for %s: %w", key, err)
	}
	return out, nil
}

func upsert(ctx context.Context, tx *sql.Tx, r nightshift.Recipe) error {
	cmds, err := json.Marshal(r.Commands)
	if err != nil {
		return err
	}
	check, err := json.Marshal(r.Check)
	if err != nil {
		return err
	}
	proofs, err := json.Marshal(r.Proofs)
	if err != nil {
		return err
	}
	state, err := r.State.MarshalText()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO recipes (`+columns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Key.Rule, r.Key.OS, r.Key.Version, r.Key.PackageManager, string(cmds), string(check), string(state),
		r.Fixes, r.Failures, r.LastError, string(proofs), r.Created.UnixNano(), r.Updated.UnixNano())
	return err
}

func (s *SQLite) query(ctx context.Context, where string, args ...any) ([]nightshift.Recipe, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM recipes`+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []nightshift.Recipe
	for rows.Next() {
		r, err := scanRecipe(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Best implements Store.
func (s *SQLite) Best(ctx context.Context, key nightshift.RecipeKey) (nightshift.Recipe, bool, error) {
	cands, err := s.query(ctx, ` WHERE `+whereKey, keyArgs(key)...)
	if err != nil {
		return nightshift.Recipe{}, false, fmt.Errorf("best recipe for %s: %w", key, err)
	}
	r, ok := best(cands)
	return r, ok, nil
}

// Fail implements Store.
func (s *SQLite) Fail(ctx context.Context, id string, key nightshift.RecipeKey, reason string) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		r, err := scanRecipe(tx.QueryRowContext(ctx, `SELECT `+columns+` FROM recipes WHERE `+whereKey+` AND id = ?`, append(keyArgs(key), id)...))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		r.Failures++
		r.LastError = cutError(reason)
		r.Updated = s.now().UTC()
		if r.State != nightshift.RecipeRetired {
			r.State = nightshift.RecipeDemoted
		}
		return upsert(ctx, tx, r)
	})
	if err != nil {
		return fmt.Errorf("fail recipe %s for %s: %w", id, key, err)
	}
	return nil
}

// SetState implements Store.
func (s *SQLite) SetState(ctx context.Context, id string, key *nightshift.RecipeKey, state nightshift.RecipeState) error {
	if err := checkState(state); err != nil {
		return fmt.Errorf("set recipe %s: %w", id, err)
	}
	text, _ := state.MarshalText()
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		q, args := `UPDATE recipes SET state = ?, updated_ns = ? WHERE id = ?`, []any{string(text), s.now().UTC().UnixNano(), id}
		if key != nil {
			q += ` AND ` + whereKey
			args = append(args, keyArgs(*key)...)
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return cmpErr(err, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set recipe %s: %w", id, err)
	}
	return nil
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// List implements Store.
func (s *SQLite) List(ctx context.Context, f Filter) ([]nightshift.Recipe, error) {
	all, err := s.query(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list recipes: %w", err)
	}
	out := slices.DeleteFunc(all, func(r nightshift.Recipe) bool { return !f.match(r) })
	slices.SortFunc(out, compareList)
	return out, nil
}
