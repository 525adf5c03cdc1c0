package lessons_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/lessons"
)

// ExampleNewSQLite keeps the lessons in a journal's file, written through
// the journal's single writer connection.
func ExampleNewSQLite() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "lessons")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	j, err := journal.Open(ctx, filepath.Join(dir, "night.db"), journal.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer j.Close()
	store, err := lessons.NewSQLite(ctx, j, lessons.SQLiteConfig{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close() // leaves the journal open
	err = store.Add(ctx, lessons.Lesson{Rule: "aide_build_database", Kind: lessons.Worked,
		Text: "fixed in attempt 1: ran 'aideinit -y -f' — exited 0; re-check passed", Host: "web-1"})
	if err != nil {
		log.Fatal(err)
	}
	got, err := store.Lessons(ctx, lessons.Query{Rule: "aide_build_database"})
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range got {
		fmt.Println(l.Kind, l.Host, l.Text)
	}
	// Output:
	// worked web-1 fixed in attempt 1: ran 'aideinit -y -f' — exited 0; re-check passed
}
