package lessons

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nightshift-dev/nightshift/journal"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// schemaVersion is the version of the tables below, kept in lessons_schema
// (the file's user_version and application_id belong to whoever owns the
// file, e.g. package journal).
const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS lessons_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS lessons (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	rule            TEXT    NOT NULL,
	kind            TEXT    NOT NULL CHECK (kind IN ('worked', 'failed')),
	text            TEXT    NOT NULL,
	host            TEXT    NOT NULL DEFAULT '',
	os              TEXT    NOT NULL DEFAULT '',
	package_manager TEXT    NOT NULL DEFAULT '',
	at_ns           INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS lessons_by_rule ON lessons (rule, text);
`

// candidatesQuery reads one rule's lessons, which rank orders (the row id
// is the insertion order rank breaks ties with).
const candidatesQuery = `SELECT id, rule, kind, text, host, os, package_manager, at_ns FROM lessons WHERE rule = ?`

// SQLiteConfig configures a SQLite store. The zero value is usable.
type SQLiteConfig struct {
	// Now stamps lessons added without a time; nil means time.Now.
	Now func() time.Time
	// BusyTimeout is how long a write waits for another connection's lock.
	// Zero means 5 seconds.
	BusyTimeout time.Duration
}

// SQLite is a Store in a SQLite file (modernc.org/sqlite, WAL mode). It
// creates and uses only the tables lessons and lessons_schema, so it may
// share a file with other tables. In a journal's file it should be made with
// NewSQLite on the open journal, which then does all its writes (one writer
// connection, no SQLITE_BUSY between the two); OpenSQLite opens a file of
// its own. It is safe for concurrent use, and by several processes.
type SQLite struct {
	db    DB
	close func() error // closes what OpenSQLite opened; nil for NewSQLite
	now   func() time.Time
}

// DB is the database a SQLite store keeps its tables in: transactions that
// write and queries that read. A *journal.Journal satisfies it (WriteTx on
// its single writer connection, QueryContext on its readers).
type DB interface {
	// WriteTx runs fn in one write transaction, committed when fn returns
	// nil and rolled back otherwise.
	WriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error
	// QueryContext runs a read-only query.
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// OpenSQLite opens the lessons store in the SQLite file at path, creating the
// file and its tables when absent. Its writes take the file's write lock on
// their own connections: for a journal's file, use NewSQLite.
func OpenSQLite(ctx context.Context, path string, cfg SQLiteConfig) (*SQLite, error) {
	if path == "" {
		return nil, errors.New("open lessons store: empty path")
	}
	if cfg.BusyTimeout <= 0 {
		cfg.BusyTimeout = 5 * time.Second
	}
	dsn := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path) +
		fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_txlock=immediate", cfg.BusyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open lessons store %s: %w", path, err)
	}
	s, err := NewSQLite(ctx, ownDB{db}, cfg)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open lessons store %s: %w", path, err)
	}
	s.close = db.Close
	return s, nil
}

// NewSQLite returns the lessons store in db — an open journal, say — creating
// its tables when absent. All its writes go through db.WriteTx. Closing the
// store leaves db open: its owner closes it.
func NewSQLite(ctx context.Context, db DB, cfg SQLiteConfig) (*SQLite, error) {
	if db == nil {
		return nil, errors.New("lessons store: nil database")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &SQLite{db: db, now: cfg.Now}
	if err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		return journal.InitTables(ctx, tx, "lessons", schema, schemaVersion, ErrSchema)
	}); err != nil {
		return nil, fmt.Errorf("lessons store: %w", err)
	}
	return s, nil
}

// ownDB is a database the store opened itself.
type ownDB struct{ *sql.DB }

func (d ownDB) WriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Close closes the store, and the file OpenSQLite opened; a store made by
// NewSQLite leaves its database open.
func (s *SQLite) Close() error {
	if s.close == nil {
		return nil
	}
	return s.close()
}

// Add stores the lessons in one transaction: all or none.
func (s *SQLite) Add(ctx context.Context, ls ...Lesson) error {
	norm := make([]Lesson, 0, len(ls))
	for _, l := range ls {
		n, err := normalize(l, s.now)
		if err != nil {
			return fmt.Errorf("add lessons: %w", err)
		}
		norm = append(norm, n)
	}
	if len(norm) == 0 {
		return nil
	}
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO lessons (rule, kind, text, host, os, package_manager, at_ns) VALUES (?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, l := range norm {
			if _, err := st.ExecContext(ctx, l.Rule, string(l.Kind), l.Text, l.Host, l.OS, l.PackageManager, l.At.UnixNano()); err != nil {
				return fmt.Errorf("rule %s: %w", l.Rule, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add lessons: %w", err)
	}
	return nil
}

// Lessons returns the rule's lessons ranked as Store describes, by rank,
// the ranking Memory uses too.
func (s *SQLite) Lessons(ctx context.Context, q Query) ([]Lesson, error) {
	rows, err := s.db.QueryContext(ctx, candidatesQuery, q.Rule)
	if err != nil {
		return nil, fmt.Errorf("query lessons of rule %s: %w", q.Rule, err)
	}
	defer rows.Close()
	var cands []record
	for rows.Next() {
		var r record
		var kind string
		var at int64
		if err := rows.Scan(&r.seq, &r.Rule, &kind, &r.Text, &r.Host, &r.OS, &r.PackageManager, &at); err != nil {
			return nil, fmt.Errorf("query lessons of rule %s: %w", q.Rule, err)
		}
		r.Kind, r.At = Kind(kind), time.Unix(0, at).UTC()
		cands = append(cands, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query lessons of rule %s: %w", q.Rule, err)
	}
	return rank(cands, q), nil
}
