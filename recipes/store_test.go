package recipes_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/recipes"
)

// stores returns each Store implementation, empty, with a clock that ticks
// one second per call.
func stores(t *testing.T) map[string]recipes.Store {
	t.Helper()
	clock := func() func() time.Time {
		var mu sync.Mutex
		at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
		return func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			at = at.Add(time.Second)
			return at
		}
	}
	j, err := journal.Open(context.Background(), filepath.Join(t.TempDir(), "night.db"), journal.Config{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { j.Close() })
	sq, err := recipes.NewSQLite(context.Background(), j, clock())
	require.NoError(t, err)
	return map[string]recipes.Store{"memory": recipes.NewMemory(clock()), "sqlite": sq}
}

var (
	deb12 = nightshift.RecipeKey{Rule: "sshd_disable_root_login", OS: "debian", Version: "12", PackageManager: "apt-get"}
	deb11 = nightshift.RecipeKey{Rule: "sshd_disable_root_login", OS: "debian", Version: "11", PackageManager: "apt-get"}
	fix1  = []string{"sed -i 's/^#\\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config", "systemctl reload ssh"}
	chk   = nightshift.RecipeCheck{Command: "sshd -T | grep -qx 'permitrootlogin no'"}
	fix2  = []string{"printf 'PermitRootLogin no\\n' > /etc/ssh/sshd_config.d/10-root.conf"}
)

func TestStoreLifecycle(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			_, ok, err := s.Best(ctx, deb12)
			require.NoError(t, err)
			assert.False(t, ok, "an empty store has no recipe")

			r1, err := s.Prove(ctx, nightshift.Recipe{Key: deb12, Commands: fix1, Check: chk}, nightshift.RecipeProof{Host: "web1", Run: "1", Check: "exit 0: compliant",
				Changes: []nightshift.FileChange{{Path: "/etc/ssh/sshd_config", Change: nightshift.ChangeModified, Diff: "-PermitRootLogin yes\n+PermitRootLogin no\n"}}})
			require.NoError(t, err)
			assert.Equal(t, nightshift.RecipeID(deb12.Rule, fix1), r1.ID)
			assert.Equal(t, 1, r1.Fixes)
			_, err = s.Prove(ctx, nightshift.Recipe{Key: deb12, Commands: fix2, Check: chk}, nightshift.RecipeProof{Host: "web2", Run: "1"})
			require.NoError(t, err)
			// fix2 proves twice: it outranks fix1.
			r2, err := s.Prove(ctx, nightshift.Recipe{Key: deb12, Commands: fix2, Check: chk}, nightshift.RecipeProof{Host: "web3", Run: "1"})
			require.NoError(t, err)
			assert.Equal(t, 2, r2.Fixes)
			assert.Len(t, r2.Proofs, 2)
			best, ok, err := s.Best(ctx, deb12)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, r2.ID, best.ID)
			assert.Equal(t, fix2, best.Commands)

			// Another key has nothing: replay matches keys exactly.
			_, ok, err = s.Best(ctx, deb11)
			require.NoError(t, err)
			assert.False(t, ok)

			// A failed replay demotes: the other recipe is next.
			require.NoError(t, s.Fail(ctx, r2.ID, deb12, "re-check failed:\n exit 1"))
			best, ok, err = s.Best(ctx, deb12)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, r1.ID, best.ID)
			all, err := s.List(ctx, recipes.Filter{ID: r2.ID})
			require.NoError(t, err)
			require.Len(t, all, 1)
			assert.Equal(t, nightshift.RecipeDemoted, all[0].State)
			assert.Equal(t, "re-check failed: exit 1", all[0].LastError)
			assert.Equal(t, 1, all[0].Failures)

			// Proving a demoted recipe again does not bring it back.
			_, err = s.Prove(ctx, nightshift.Recipe{Key: deb12, Commands: fix2, Check: chk}, nightshift.RecipeProof{Host: "web4", Run: "2"})
			require.NoError(t, err)
			best, _, _ = s.Best(ctx, deb12)
			assert.Equal(t, r1.ID, best.ID)

			// An operator pins it back; it wins over the active one.
			require.NoError(t, s.SetState(ctx, r2.ID, nil, nightshift.RecipePinned))
			best, _, _ = s.Best(ctx, deb12)
			assert.Equal(t, r2.ID, best.ID)

			// Retired recipes are never replayed.
			require.NoError(t, s.SetState(ctx, r2.ID, &deb12, nightshift.RecipeRetired))
			require.NoError(t, s.SetState(ctx, r1.ID, nil, nightshift.RecipeRetired))
			_, ok, err = s.Best(ctx, deb12)
			require.NoError(t, err)
			assert.False(t, ok)

			list, err := s.List(ctx, recipes.Filter{Rule: deb12.Rule, States: []nightshift.RecipeState{nightshift.RecipeRetired}})
			require.NoError(t, err)
			assert.Len(t, list, 2)
		})
	}
}

func TestStoreBadInput(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for _, tt := range []struct {
				key  nightshift.RecipeKey
				cmds []string
			}{
				{nightshift.RecipeKey{}, fix1},
				{deb12, nil},
				{deb12, []string{"true", "  "}},
				{deb12, make([]string, recipes.MaxCommands+1)},
			} {
				_, err := s.Prove(ctx, nightshift.Recipe{Key: tt.key, Commands: tt.cmds, Check: chk}, nightshift.RecipeProof{})
				assert.ErrorIs(t, err, recipes.ErrInvalid, "Prove(%v, %d commands)", tt.key, len(tt.cmds))
			}
			assert.ErrorIs(t, s.Fail(ctx, "r-nope", deb12, "x"), recipes.ErrNotFound)
			assert.ErrorIs(t, s.SetState(ctx, "r-nope", nil, nightshift.RecipePinned), recipes.ErrNotFound)
			r, err := s.Prove(ctx, nightshift.Recipe{Key: deb12, Commands: fix1, Check: chk}, nightshift.RecipeProof{})
			require.NoError(t, err)
			assert.ErrorIs(t, s.SetState(ctx, r.ID, nil, nightshift.RecipeState(9)), recipes.ErrInvalid)
			assert.ErrorIs(t, s.SetState(ctx, r.ID, &deb11, nightshift.RecipePinned), recipes.ErrNotFound)
			list, err := s.List(ctx, recipes.Filter{})
			require.NoError(t, err)
			assert.Len(t, list, 1, "nothing of the refused calls was stored")
		})
	}
}

// TestStoreConcurrentProofs: hosts finishing at once never lose a proof.
func TestStoreConcurrentProofs(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, 40)
			for i := range 40 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := s.Prove(ctx, nightshift.Recipe{Key: deb12, Commands: fix1, Check: chk}, nightshift.RecipeProof{Host: fmt.Sprintf("h%d", i), Run: "1"})
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			r, ok, err := s.Best(ctx, deb12)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, 40, r.Fixes)
			assert.Len(t, r.Proofs, recipes.MaxProofs)
		})
	}
}

func TestSQLiteNewerSchema(t *testing.T) {
	ctx := context.Background()
	j, err := journal.Open(ctx, filepath.Join(t.TempDir(), "n.db"), journal.Config{NoSync: true})
	require.NoError(t, err)
	defer j.Close()
	_, err = recipes.NewSQLite(ctx, j, nil)
	require.NoError(t, err)
	require.NoError(t, j.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE recipes_schema SET version = 99")
		return err
	}))
	_, err = recipes.NewSQLite(ctx, j, nil)
	assert.True(t, errors.Is(err, recipes.ErrSchema), "got %v", err)
}
