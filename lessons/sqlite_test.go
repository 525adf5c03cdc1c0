package lessons

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/nightshift-dev/nightshift/journal"
)

func TestSQLiteReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lessons.db")
	s, err := OpenSQLite(ctx, path, SQLiteConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, fixture...); err != nil {
		t.Fatal(err)
	}
	want, err := s.Lessons(ctx, Query{Rule: "r1", OS: deb, Limit: -1})
	if err != nil || len(want) == 0 {
		t.Fatalf("lessons before reopening: %v (%d)", err, len(want))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenSQLite(ctx, path, SQLiteConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Lessons(ctx, Query{Rule: "r1", OS: deb, Limit: -1})
	if err != nil || len(got) != 7 || dump(got) != dump(want) {
		t.Fatalf("after reopening (%v):\n%s\nwant\n%s", err, dump(got), dump(want))
	}
}

func TestSQLiteBadFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte("this is not a database, just some text that is long enough to have a header"), 0o644); err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(dir, "newer.db")
	s, err := OpenSQLite(ctx, newer, SQLiteConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("UPDATE lessons_schema SET version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cases := []struct {
		name, path string
		is         error
	}{
		{"not a database", garbage, nil},
		{"newer schema", newer, ErrSchema},
		{"directory", dir, nil},
		{"missing directory", filepath.Join(dir, "no", "such", "dir", "x.db"), nil},
		{"empty path", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := OpenSQLite(ctx, c.path, SQLiteConfig{})
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("err = %v, want %v", err, c.is)
			}
			t.Log(err)
		})
	}
}

// TestSQLiteSharesAJournalFile: the store's tables live beside a journal's
// without disturbing it; the journal still opens and reads its runs.
func TestSQLiteSharesAJournalFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "night.db")
	j, err := journal.Open(ctx, path, journal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.StartRun(ctx, journal.RunSpec{Name: "nightly"}); err != nil {
		t.Fatal(err)
	}
	s, err := OpenSQLite(ctx, path, SQLiteConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, fixture...); err != nil {
		t.Fatal(err)
	}
	s.Close()
	j.Close()

	j, err = journal.Open(ctx, path, journal.Config{})
	if err != nil {
		t.Fatalf("the journal does not reopen beside the lessons: %v", err)
	}
	defer j.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var runs, lessons int
	if err := db.QueryRow("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM lessons)").Scan(&runs, &lessons); err != nil {
		t.Fatal(err)
	}
	if runs != 1 || lessons != len(fixture) {
		t.Fatalf("%d runs and %d lessons, want 1 and %d", runs, lessons, len(fixture))
	}
}
