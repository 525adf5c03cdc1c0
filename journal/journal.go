package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Errors. Match them with errors.Is.
var (
	// ErrNotJournal: the file is not SQLite, or an SQLite database that is
	// not a Nightshift journal.
	ErrNotJournal = errors.New("not a nightshift journal")
	// ErrNewerSchema: the journal was written by a newer Nightshift.
	ErrNewerSchema = errors.New("journal schema is newer than this program")
	// ErrReadOnly: the file cannot be written, or the Journal was opened
	// with Config.ReadOnly.
	ErrReadOnly = errors.New("journal is read-only")
	// ErrClosed: the Journal was closed.
	ErrClosed = errors.New("journal is closed")
	// ErrNotFound: no run, task or command with that ID.
	ErrNotFound = errors.New("not found in journal")
	// ErrTaskFinished: the task already has its outcome; finished tasks are
	// never redone or changed.
	ErrTaskFinished = errors.New("task already finished")
	// ErrCommandPending: the task has a command that started without a
	// recorded result; resolve it with FinishCommand (same process) or
	// MarkUnknown (after a crash) first.
	ErrCommandPending = errors.New("task has a command without a recorded result")
	// ErrNotPending: FinishCommand or MarkUnknown on a command that is not
	// in the started state.
	ErrNotPending = errors.New("command is not pending")
	// ErrBusy: another Journal (this process's or another's) has the file
	// open for writing. The lock is on the file itself, so a symlink, a
	// hard link or another spelling of the path does not get around it.
	ErrBusy = errors.New("journal is in use by another writer")
	// ErrWALMissing: the file is a journal in WAL mode whose records are
	// all in its -wal file, which is not next to it (a copy made without
	// it, while a worker was running).
	ErrWALMissing = errors.New("journal's -wal file is missing")
)

// SchemaError reports a journal whose schema version this package cannot
// use. It matches ErrNewerSchema when Found > Supported.
type SchemaError struct {
	Path             string
	Found, Supported int
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("journal %s: schema version %d, this program supports up to %d", e.Path, e.Found, e.Supported)
}

// Is makes errors.Is(err, ErrNewerSchema) true for a newer schema.
func (e *SchemaError) Is(target error) bool {
	return target == ErrNewerSchema && e.Found > e.Supported
}

// Defaults for Config's zero values.
const (
	DefaultOutputCap   = 64 << 10 // bytes per stream
	DefaultBusyTimeout = 10 * time.Second
)

// Config configures Open. The zero value is ready to use.
type Config struct {
	// ReadOnly opens the journal for queries only: no migration, and every
	// write returns ErrReadOnly. A journal on a read-only directory or file
	// system (where SQLite cannot create its -shm file) is read as
	// immutable when it has no -wal file, i.e. no writer has it open.
	ReadOnly bool
	// OutputCap caps each stored stdout, stderr and check output, keeping
	// the first and the last OutputCap/2 bytes with a marker between; the
	// bytes cut are added to the recorded StdoutCut/StderrCut. Default
	// DefaultOutputCap; negative: no cap.
	OutputCap int
	// BusyTimeout bounds how long a write waits for another process's
	// write lock. Default DefaultBusyTimeout.
	BusyTimeout time.Duration
	// NoSync commits with synchronous=NORMAL: a commit still survives the
	// process being killed, but the last commits may be lost on power
	// failure. Default (false): synchronous=FULL.
	NoSync bool
	// Now is the clock for recorded times. Default time.Now.
	Now func() time.Time
}

// Journal is an open journal file. It is safe for concurrent use.
type Journal struct {
	path string
	cfg  Config
	w    *sql.DB // the single writer connection; nil when read-only
	r    *sql.DB // readers
	// lock holds an exclusive flock on the journal file while a writer
	// has it open; nil when read-only.
	lock *os.File
	// walMissing: the file's header says WAL mode and there is no -wal
	// file; an empty-looking database is then a copy that lost its records.
	walMissing bool
}

// Open opens the journal at path, creating it when absent (unless
// cfg.ReadOnly) and migrating an older schema. See the package comment for
// its errors.
func Open(ctx context.Context, path string, cfg Config) (*Journal, error) {
	if cfg.OutputCap == 0 {
		cfg.OutputCap = DefaultOutputCap
	}
	if cfg.BusyTimeout <= 0 {
		cfg.BusyTimeout = DefaultBusyTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if path == "" {
		return nil, errors.New("open journal: empty path")
	}
	j := &Journal{path: path, cfg: cfg}
	fi, statErr := os.Stat(path)
	switch {
	case statErr == nil && fi.IsDir():
		return nil, fmt.Errorf("open journal %s: is a directory: %w", path, ErrNotJournal)
	case statErr != nil && !errors.Is(statErr, os.ErrNotExist):
		return nil, fmt.Errorf("open journal %s: %w", path, statErr)
	case statErr != nil && cfg.ReadOnly:
		return nil, fmt.Errorf("open journal %s: %w", path, statErr)
	case statErr == nil && !cfg.ReadOnly && fi.Mode().Perm()&0o222 == 0:
		// Root may write anyway; honour the owner's intent.
		return nil, fmt.Errorf("open journal %s: file mode %v has no write permission: %w", path, fi.Mode().Perm(), ErrReadOnly)
	}
	j.walMissing = walWithoutFile(path)
	if !cfg.ReadOnly {
		if err := j.lockFile(); err != nil {
			return nil, err
		}
	}
	var err error
	if j.r, err = sql.Open("sqlite", j.dsn(true)); err != nil {
		j.unlock()
		return nil, fmt.Errorf("open journal %s: %w", path, err)
	}
	j.r.SetMaxOpenConns(4)
	if !cfg.ReadOnly {
		if j.w, err = sql.Open("sqlite", j.dsn(false)); err != nil {
			j.r.Close()
			j.unlock()
			return nil, fmt.Errorf("open journal %s: %w", path, err)
		}
		j.w.SetMaxOpenConns(1)
		j.w.SetMaxIdleConns(1)
		j.w.SetConnMaxLifetime(0)
		j.w.SetConnMaxIdleTime(0)
		err = j.migrate(ctx)
	} else {
		err = j.checkReadOnly(ctx)
		if err != nil && j.immutableFallback(err) {
			// A read-only directory or file system: SQLite cannot create
			// the -shm file a WAL journal is read through. With no -wal
			// file (no writer, nothing uncheckpointed) the main file is the
			// whole journal and is read as immutable.
			j.r.Close()
			if j.r, err = sql.Open("sqlite", j.dsn(true)+"&immutable=1"); err != nil {
				return nil, fmt.Errorf("open journal %s: %w", path, err)
			}
			j.r.SetMaxOpenConns(4)
			err = j.checkReadOnly(ctx)
		}
	}
	if err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// dsn builds the modernc.org/sqlite data source name. Only per-connection
// pragmas go here: journal_mode and auto_vacuum change the file and are set
// once the file is known to be a journal.
func (j *Journal) dsn(readOnly bool) string {
	sync := "FULL"
	if j.cfg.NoSync {
		sync = "NORMAL"
	}
	q := []string{
		fmt.Sprintf("_pragma=busy_timeout(%d)", j.cfg.BusyTimeout.Milliseconds()),
		"_pragma=foreign_keys(1)",
		"_pragma=synchronous(" + sync + ")",
	}
	if readOnly {
		q = append(q, "mode=ro", "_pragma=query_only(1)")
	} else {
		q = append(q, "_txlock=immediate")
	}
	return "file:" + escapePath(j.path) + "?" + strings.Join(q, "&")
}

// escapePath escapes the characters SQLite's URI parser gives meaning to.
func escapePath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

// Path returns the journal's file name.
func (j *Journal) Path() string { return j.path }

// Close closes the journal. Steps already recorded are durable; Close
// checkpoints the WAL into the main file.
func (j *Journal) Close() error {
	var errs []error
	if j.w != nil {
		_, _ = j.w.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		errs = append(errs, j.w.Close())
	}
	if j.r != nil {
		errs = append(errs, j.r.Close())
	}
	// After SQLite's own descriptors: closing a descriptor of the file
	// drops the process's POSIX locks on it, SQLite's included.
	j.unlock()
	return errors.Join(errs...)
}

// lockFile opens the journal file (creating it when absent) and takes an
// exclusive flock on it, held until Close. The kernel drops it when the
// process dies, so a crash never leaves a stale lock. flock and SQLite's
// POSIX locks are independent on Linux.
func (j *Journal) lockFile() error {
	f, err := os.OpenFile(j.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return fmt.Errorf("open journal %s: %w: %w", j.path, ErrReadOnly, err)
		}
		return fmt.Errorf("open journal %s: %w", j.path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("open journal %s: %w", j.path, ErrBusy)
		}
		return fmt.Errorf("open journal %s: lock: %w", j.path, err)
	}
	j.lock = f
	return nil
}

func (j *Journal) unlock() {
	if j.lock != nil {
		j.lock.Close()
		j.lock = nil
	}
}

// walWithoutFile reports whether the SQLite file at path is in WAL mode
// (header bytes 18 and 19 are 2) and has no -wal file next to it.
func walWithoutFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [20]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:16]) != "SQLite format 3\x00" || h[18] != 2 || h[19] != 2 {
		return false
	}
	_, err = os.Stat(path + "-wal")
	return errors.Is(err, os.ErrNotExist)
}

// header reads the identity and version of the database behind db.
func (j *Journal) header(ctx context.Context, q querier) (appID, version, tables int, err error) {
	if err = q.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return 0, 0, 0, j.classify("read journal header", err)
	}
	if err = q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, 0, 0, j.classify("read journal header", err)
	}
	if err = q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return 0, 0, 0, j.classify("read journal header", err)
	}
	return appID, version, tables, nil
}

func (j *Journal) identify(appID, version, tables int) error {
	if appID != applicationID {
		if appID == 0 && version == 0 && tables == 0 {
			if j.walMissing {
				// A new journal gets its schema in its first
				// transaction: a WAL-mode file without it lost its -wal.
				return fmt.Errorf("open journal %s: %w: its records are in %s-wal, which is not there (copy the journal with its -wal file, or after the worker has stopped)",
					j.path, ErrWALMissing, j.path)
			}
			return nil // empty: a new journal
		}
		return fmt.Errorf("open journal %s: sqlite database with application id %#x: %w", j.path, appID, ErrNotJournal)
	}
	if version > SchemaVersion {
		return &SchemaError{Path: j.path, Found: version, Supported: SchemaVersion}
	}
	return nil
}

func (j *Journal) checkReadOnly(ctx context.Context) error {
	appID, version, tables, err := j.header(ctx, j.r)
	if err != nil {
		return err
	}
	if err := j.identify(appID, version, tables); err != nil {
		return err
	}
	if appID == 0 || version < SchemaVersion {
		return &SchemaError{Path: j.path, Found: version, Supported: SchemaVersion}
	}
	return nil
}

// migrate identifies the file, then brings its schema to SchemaVersion, one
// transaction per migration.
func (j *Journal) migrate(ctx context.Context) error {
	conn, err := j.w.Conn(ctx)
	if err != nil {
		return j.classify("open journal", err)
	}
	defer conn.Close()
	appID, version, tables, err := j.header(ctx, conn)
	if err != nil {
		return err
	}
	if err := j.identify(appID, version, tables); err != nil {
		return err
	}
	if tables == 0 {
		// Only possible on a new file: lets Prune return space to the OS.
		if _, err := conn.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
			return j.classify("create journal", err)
		}
	}
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return j.classify("open journal: set WAL mode", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("open journal %s: journal mode is %q, want wal", j.path, mode)
	}
	for {
		done, err := j.migrateOne(ctx, conn)
		if err != nil || done {
			return err
		}
	}
}

func (j *Journal) migrateOne(ctx context.Context, conn *sql.Conn) (done bool, err error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, j.classify("migrate journal", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	// Re-read under the write lock: another process may have migrated.
	appID, version, tables, err := j.header(ctx, tx)
	if err != nil {
		return false, err
	}
	if err := j.identify(appID, version, tables); err != nil {
		return false, err
	}
	if version == SchemaVersion {
		return true, tx.Rollback()
	}
	if _, err := tx.ExecContext(ctx, migrations[version]); err != nil {
		return false, j.classify(fmt.Sprintf("migrate journal to version %d", version+1), err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
		return false, j.classify("migrate journal", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version+1)); err != nil {
		return false, j.classify("migrate journal", err)
	}
	if err := tx.Commit(); err != nil {
		return false, j.classify("migrate journal", err)
	}
	return false, nil
}

// classify wraps an SQLite error with the journal's sentinel errors.
func (j *Journal) classify(what string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("%s %s: %w: %w", what, j.path, ErrNotJournal, err)
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
			if se.Code()&0xff != sqlite3.SQLITE_CANTOPEN || j.unwritable() {
				return fmt.Errorf("%s %s: %w: %w", what, j.path, ErrReadOnly, err)
			}
		}
	}
	if errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "database is closed") {
		return fmt.Errorf("%s %s: %w", what, j.path, ErrClosed)
	}
	return fmt.Errorf("%s %s: %w", what, j.path, err)
}

// immutableFallback reports whether a read-only open that failed with err
// may read the file as immutable: SQLite could not open it (its -shm file
// cannot be created) and there is no -wal file with content.
func (j *Journal) immutableFallback(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_CANTOPEN {
		return false
	}
	fi, serr := os.Stat(j.path + "-wal")
	return errors.Is(serr, os.ErrNotExist) || (serr == nil && fi.Size() == 0)
}

// unwritable reports whether the journal's file or directory refuses writes.
func (j *Journal) unwritable() bool {
	f, err := os.OpenFile(j.path, os.O_WRONLY, 0)
	if err != nil {
		return errors.Is(err, os.ErrPermission)
	}
	f.Close()
	return false
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}
