package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// WriteTx runs fn in one write transaction on the journal's single writer
// connection and commits it when fn returns nil (else rolls it back), for
// tables another package keeps in the journal's file (package lessons):
// their writes are serialized with the journal's own in process, so neither
// waits for the other's lock nor gets SQLITE_BUSY. fn must write only its
// own tables and return promptly — the journal's records wait for it. It
// returns ErrReadOnly on a read-only journal and ErrClosed after Close;
// fn's error is returned wrapped.
func (j *Journal) WriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return j.write(ctx, "write to journal", fn)
}

// QueryContext runs a read-only query on the journal's readers, for tables
// another package keeps in the journal's file. It sees the last committed
// state.
func (j *Journal) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := j.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, j.classify("query journal", err)
	}
	return rows, nil
}

// InitTables creates the tables another package keeps in a journal's file
// (or a file of its own) and checks their version, in tx: ddl creates them
// when absent (CREATE … IF NOT EXISTS), the one-column table
// owner_schema among them, which holds their version. A file without a
// version gets version; one whose version is newer than version (written
// by a later program) is refused with an error wrapping errNewer. owner
// is the package's own table prefix, never input.
func InitTables(ctx context.Context, tx *sql.Tx, owner, ddl string, version int, errNewer error) error {
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return err
	}
	var got int
	err := tx.QueryRowContext(ctx, "SELECT version FROM "+owner+"_schema").Scan(&got)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = tx.ExecContext(ctx, "INSERT INTO "+owner+"_schema (version) VALUES (?)", version)
		return err
	case err != nil:
		return err
	case got > version:
		return fmt.Errorf("%w: version %d, this program knows up to %d", errNewer, got, version)
	}
	return nil
}
