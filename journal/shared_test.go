package journal

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteTx: another package's table in the journal's file is written in
// one transaction on the writer (rolled back when fn fails) and read on the
// readers; a read-only or closed journal refuses the write.
func TestWriteTx(t *testing.T) {
	ctx := context.Background()
	j, path := openTest(t, Config{})
	create := func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "CREATE TABLE other (v INTEGER)")
		return err
	}
	require.NoError(t, j.WriteTx(ctx, create))
	insert := func(v int) func(tx *sql.Tx) error {
		return func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO other (v) VALUES (?)", v)
			return err
		}
	}
	require.NoError(t, j.WriteTx(ctx, insert(1)))
	boom := errors.New("boom")
	err := j.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := insert(2)(tx); err != nil {
			return err
		}
		return boom
	})
	assert.ErrorIs(t, err, boom)

	rows, err := j.QueryContext(ctx, "SELECT v FROM other ORDER BY v")
	require.NoError(t, err)
	var got []int
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		got = append(got, v)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	assert.Equal(t, []int{1}, got, "the failed transaction is rolled back")

	_, err = j.QueryContext(ctx, "INSERT INTO other (v) VALUES (3)")
	assert.Error(t, err, "the readers do not write")

	ro, err := Open(ctx, path, Config{ReadOnly: true})
	require.NoError(t, err)
	defer ro.Close()
	assert.ErrorIs(t, ro.WriteTx(ctx, insert(4)), ErrReadOnly)

	require.NoError(t, j.Close())
	assert.ErrorIs(t, j.WriteTx(ctx, insert(5)), ErrClosed)
}

// TestInitTables: another package's tables are created once with their
// version; a second init keeps them and their rows; a newer version in the
// file is refused with the package's own error.
func TestInitTables(t *testing.T) {
	ctx := context.Background()
	j, _ := openTest(t, Config{})
	const ddl = `CREATE TABLE IF NOT EXISTS other_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS other (v INTEGER);`
	errNewer := errors.New("unsupported other schema")
	init := func(version int) error {
		return j.WriteTx(ctx, func(tx *sql.Tx) error { return InitTables(ctx, tx, "other", ddl, version, errNewer) })
	}
	require.NoError(t, init(2))
	require.NoError(t, j.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO other (v) VALUES (1)")
		return err
	}))
	require.NoError(t, init(2))
	require.NoError(t, init(3), "an older version in the file is not refused")
	var versions, rows int
	require.NoError(t, j.r.QueryRowContext(ctx, "SELECT count(*) FROM other").Scan(&rows))
	require.NoError(t, j.r.QueryRowContext(ctx, "SELECT count(*) FROM other_schema WHERE version = 2").Scan(&versions))
	assert.Equal(t, 1, rows, "a second init keeps the rows")
	assert.Equal(t, 1, versions, "one version row, the first init's")
	err := init(1)
	assert.ErrorIs(t, err, errNewer)
	assert.ErrorContains(t, err, "version 2, this program knows up to 1")
}
