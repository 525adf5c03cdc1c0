package journal

import (
	"context"
	"database/sql"
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
