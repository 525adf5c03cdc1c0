package lessons

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// nightLessons is what a night of 200 rules × 50 hosts leaves: per rule and
// host one worked lesson and two failed ones (30,000 lessons), with texts
// repeating across hosts as they do when the same fix works everywhere.
func nightLessons() []Lesson {
	oses := []string{deb, ubu, rhl}
	pms := []string{"apt-get", "apt-get", "dnf"}
	var ls []Lesson
	for h := 0; h < 50; h++ {
		for r := 0; r < 200; r++ {
			base := Lesson{Rule: fmt.Sprintf("rule_%03d", r), Host: fmt.Sprintf("host-%02d", h), OS: oses[h%3], PackageManager: pms[h%3], At: at(h)}
			w, f1, f2 := base, base, base
			w.Kind, w.Text = Worked, fmt.Sprintf("fixed in attempt 3: ran 'sed -i s/x/y/ /etc/rule_%03d.conf' — exited 0; re-check passed", r)
			f1.Kind, f1.Text = Failed, fmt.Sprintf("ran 'apt-get install -y pkg%d' — failed (exit 100), dpkg lock held; re-check failed", h%5)
			f2.Kind, f2.Text = Failed, fmt.Sprintf("ran 'systemctl restart svc%d' — failed (exit 5), unit not found; re-check failed", (h+r)%7)
			ls = append(ls, w, f1, f2)
		}
	}
	return ls
}

// BenchmarkLessons: one query (a rule's start on a host) against a store
// holding a night's lessons.
func BenchmarkLessons(b *testing.B) {
	ctx := context.Background()
	ls := nightLessons()
	sq, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "lessons.db"), SQLiteConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer sq.Close()
	mem := NewMemoryStore(MemoryStoreConfig{})
	for _, s := range []Store{sq, mem} {
		if err := s.Add(ctx, ls...); err != nil {
			b.Fatal(err)
		}
	}
	for name, s := range map[string]Store{"sqlite": sq, "memory": mem} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				got, err := s.Lessons(ctx, Query{Rule: fmt.Sprintf("rule_%03d", i%200), OS: deb, PackageManager: "apt-get"})
				if err != nil || len(got) == 0 {
					b.Fatal(err, len(got))
				}
			}
		})
	}
}

// BenchmarkSQLiteAdd: storing one rule end's lessons (1 worked, 5 failed)
// in one transaction.
func BenchmarkSQLiteAdd(b *testing.B) {
	ctx := context.Background()
	sq, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "lessons.db"), SQLiteConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer sq.Close()
	batch := nightLessons()[:6]
	b.ReportAllocs()
	for b.Loop() {
		if err := sq.Add(ctx, batch...); err != nil {
			b.Fatal(err)
		}
	}
}
