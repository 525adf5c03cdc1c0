package batch_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/batch"

	"github.com/nightshift-dev/nightshift"
)

// A task outcome the program does not know makes the report fail, naming
// it; it is never reported as some other outcome (it used to read as
// failed).
func TestReportRefusesAnUnknownOutcome(t *testing.T) {
	ctx := context.Background()
	n := startNight(t, nightOptions{rules: 2, hosts: 1})
	path := filepath.Join(t.TempDir(), "j.db")
	j := openJournal(t, path)
	res, err := n.runner(t, j, 1, 1, nil).Run(ctx, n.spec())
	require.NoError(t, err)
	_, err = batch.Report(ctx, j, res.Run, 0)
	require.NoError(t, err, "the report of the untouched journal")

	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	r, err := db.ExecContext(ctx, "UPDATE tasks SET status = 'skipped' WHERE run_id = ? AND id = (SELECT min(id) FROM tasks WHERE run_id = ?)", res.Run, res.Run)
	require.NoError(t, err)
	changed, err := r.RowsAffected()
	require.NoError(t, err)
	require.EqualValues(t, 1, changed)

	rep, err := batch.Report(ctx, j, res.Run, 0)
	require.ErrorIs(t, err, nightshift.ErrUnknownValue)
	assert.Contains(t, err.Error(), `"skipped"`)
	assert.Nil(t, rep)
}
