package lessons

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var t0 = time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

// stores returns a fresh store of each implementation.
func stores(t *testing.T) map[string]Store {
	t.Helper()
	sq, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "lessons.db"), SQLiteConfig{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	return map[string]Store{"memory": NewMemoryStore(MemoryStoreConfig{Now: func() time.Time { return t0 }}), "sqlite": sq}
}

const (
	deb = "Debian GNU/Linux 12 (bookworm)"
	ubu = "Ubuntu 24.04.1 LTS"
	rhl = "Rocky Linux 9.4 (Blue Onyx)"
)

// fixture is added in this order to every store.
var fixture = []Lesson{
	{Rule: "r1", Kind: Failed, Text: "ran 'apt-get install -y aide' — failed (exit 100), dpkg lock held; re-check failed", Host: "web-1", OS: deb, PackageManager: "apt-get", At: at(1)},
	{Rule: "r1", Kind: Worked, Text: "fixed in attempt 2: ran 'aideinit -y -f'; re-check passed", Host: "web-1", OS: deb, PackageManager: "apt-get", At: at(2)},
	{Rule: "r1", Kind: Worked, Text: "fixed in attempt 1: ran 'aide --init'; re-check passed", Host: "db-1", OS: rhl, PackageManager: "dnf", At: at(3)},
	{Rule: "r1", Kind: Failed, Text: "ran 'dnf install -y aide' — failed (exit 1), rpm lock held; re-check failed", Host: "db-1", OS: rhl, PackageManager: "dnf", At: at(4)},
	{Rule: "r1", Kind: Worked, Text: "fixed in attempt 2: ran 'aideinit -y -f'; re-check passed", Host: "web-2", OS: ubu, PackageManager: "apt-get", At: at(5)},
	{Rule: "r1", Kind: Failed, Text: "ran 'sed -i s/x/y/ /etc/aide/aide.conf' — failed (exit 1), sed expression error; re-check failed", Host: "web-3", OS: ubu, PackageManager: "apt-get", At: at(6)},
	{Rule: "r1", Kind: Failed, Text: "the model gave up after 3 attempts: no aide package", Host: "c-1", OS: "unknown", PackageManager: "unknown", At: at(7)},
	{Rule: "r2", Kind: Worked, Text: "fixed in attempt 1: ran 'sshd -t'; re-check passed", Host: "web-1", OS: deb, PackageManager: "apt-get", At: at(8)},
	// same time as the one before: the one added later ranks first
	{Rule: "r1", Kind: Failed, Text: "ran 'aide --check' — failed (exit 1), aide database missing; re-check failed", Host: "web-4", OS: deb, PackageManager: "apt-get", At: at(1)},
}

func TestLessonsRanking(t *testing.T) {
	cases := []struct {
		name string
		q    Query
		want []string // "kind|host|seen|text-prefix" of each result
	}{
		{"same OS and package manager first, worked before failed, newest first",
			Query{Rule: "r1", OS: deb, PackageManager: "apt-get"},
			[]string{
				"worked web-1 2 fixed in attempt 2: ran 'aideinit -y -f'",
				"failed web-4 1 ran 'aide --check'",
				"failed web-1 1 ran 'apt-get install -y aide'",
				"failed web-3 1 ran 'sed -i",
				"worked db-1 1 fixed in attempt 1: ran 'aide --init'",
				"failed c-1 1 the model gave up",
				"failed db-1 1 ran 'dnf install -y aide'",
			}},
		{"same package manager only",
			Query{Rule: "r1", OS: "Debian GNU/Linux 13 (trixie)", PackageManager: "apt-get", Limit: 3},
			[]string{
				"worked web-2 2 fixed in attempt 2: ran 'aideinit -y -f'",
				"failed web-3 1 ran 'sed -i",
				"failed web-4 1 ran 'aide --check'",
			}},
		{"another family",
			Query{Rule: "r1", OS: rhl, PackageManager: "dnf", Limit: 4},
			[]string{
				"worked db-1 1 fixed in attempt 1: ran 'aide --init'",
				"failed db-1 1 ran 'dnf install -y aide'",
				"worked web-2 2 fixed in attempt 2: ran 'aideinit -y -f'",
				"failed c-1 1 the model gave up",
			}},
		{"unknown host matches nothing: worked first, then newest",
			Query{Rule: "r1", OS: "unknown", PackageManager: "unknown", Limit: 3},
			[]string{
				"worked web-2 2 fixed in attempt 2: ran 'aideinit -y -f'",
				"worked db-1 1 fixed in attempt 1: ran 'aide --init'",
				"failed c-1 1 the model gave up",
			}},
		{"other rule", Query{Rule: "r2", Limit: -1}, []string{"worked web-1 1 fixed in attempt 1: ran 'sshd -t'"}},
		{"no lessons", Query{Rule: "nope"}, nil},
	}
	for name, s := range stores(t) {
		if err := s.Add(context.Background(), fixture...); err != nil {
			t.Fatalf("%s: add: %v", name, err)
		}
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				got, err := s.Lessons(context.Background(), c.q)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(c.want) {
					t.Fatalf("got %d lessons, want %d:\n%s", len(got), len(c.want), dump(got))
				}
				for i, l := range got {
					s := fmt.Sprintf("%s %s %d %s", l.Kind, l.Host, l.Seen, l.Text)
					if len(s) < len(c.want[i]) || s[:len(c.want[i])] != c.want[i] {
						t.Errorf("lesson %d = %q, want %q…", i, s, c.want[i])
					}
				}
			})
		}
	}
}

// TestStoresAgree: both implementations return the same lessons, field for
// field, for many queries over a larger generated set.
func TestStoresAgree(t *testing.T) {
	ss := stores(t)
	var ls []Lesson
	oses := []string{deb, ubu, rhl, "unknown", ""}
	pms := []string{"apt-get", "dnf", "unknown", ""}
	for i := 0; i < 400; i++ {
		kind := Failed
		if i%7 == 0 {
			kind = Worked
		}
		ls = append(ls, Lesson{Rule: fmt.Sprintf("r%d", i%3), Kind: kind, Text: fmt.Sprintf("ran 'cmd %d'", i%23),
			Host: fmt.Sprintf("h%d", i%11), OS: oses[i%len(oses)], PackageManager: pms[i%len(pms)], At: at(i % 17)})
	}
	for _, s := range ss {
		if err := s.Add(context.Background(), ls...); err != nil {
			t.Fatal(err)
		}
	}
	for _, rule := range []string{"r0", "r1", "r2"} {
		for _, os := range oses {
			for _, pm := range pms {
				for _, limit := range []int{0, 1, 5, -1} {
					q := Query{Rule: rule, OS: os, PackageManager: pm, Limit: limit}
					m, err1 := ss["memory"].Lessons(context.Background(), q)
					s, err2 := ss["sqlite"].Lessons(context.Background(), q)
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					if !reflect.DeepEqual(m, s) {
						t.Fatalf("query %+v: memory and sqlite differ:\n%s\n---\n%s", q, dump(m), dump(s))
					}
				}
			}
		}
	}
}

func TestAddInvalid(t *testing.T) {
	cases := []struct {
		name string
		l    Lesson
	}{
		{"no rule", Lesson{Kind: Worked, Text: "x"}},
		{"blank text", Lesson{Rule: "r", Kind: Worked, Text: " \n\t"}},
		{"bad kind", Lesson{Rule: "r", Kind: "maybe", Text: "x"}},
	}
	for name, s := range stores(t) {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				good := Lesson{Rule: "r", Kind: Worked, Text: "ok"}
				err := s.Add(context.Background(), good, c.l)
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				got, err := s.Lessons(context.Background(), Query{Rule: "r"})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 0 {
					t.Fatalf("a batch with an invalid lesson stored %d lessons", len(got))
				}
			})
		}
	}
}

func TestAddNormalizes(t *testing.T) {
	long := strings.Repeat("ü", MaxTextBytes)
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			err := s.Add(context.Background(),
				Lesson{Rule: " r ", Kind: Failed, Text: "ran  'x'\n — failed\xff"},
				Lesson{Rule: "r", Kind: Failed, Text: "a" + long})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Lessons(context.Background(), Query{Rule: "r"})
			if err != nil || len(got) != 2 {
				t.Fatalf("%v, %d lessons", err, len(got))
			}
			if got[1].Text != "ran 'x' — failed" || !got[1].At.Equal(t0) {
				t.Errorf("text %q at %v", got[1].Text, got[1].At)
			}
			if n := len(got[0].Text); n > MaxTextBytes || !utf8.ValidString(got[0].Text) || !strings.HasSuffix(got[0].Text, "ü…") {
				t.Errorf("text of %d bytes (valid UTF-8: %v), want at most %d ending in an ellipsis", n, utf8.ValidString(got[0].Text), MaxTextBytes)
			}
		})
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.Add(ctx, Lesson{Rule: "r", Kind: Worked, Text: "x"}); !errors.Is(err, context.Canceled) {
				t.Errorf("Add: %v, want context.Canceled", err)
			}
			if _, err := s.Lessons(ctx, Query{Rule: "r"}); !errors.Is(err, context.Canceled) {
				t.Errorf("Lessons: %v, want context.Canceled", err)
			}
		})
	}
}

func TestLine(t *testing.T) {
	cases := []struct {
		l    Lesson
		want string
	}{
		{Lesson{Kind: Worked, Text: "ran 'x'; re-check passed", OS: deb, PackageManager: "apt-get", Seen: 3},
			"worked on Debian GNU/Linux 12 (bookworm), apt-get (seen 3 times): ran 'x'; re-check passed"},
		{Lesson{Kind: Failed, Text: "ran 'y'", OS: "unknown", PackageManager: "dnf", Seen: 1}, "failed on dnf: ran 'y'"},
		{Lesson{Kind: Failed, Text: "ran 'y'"}, "failed: ran 'y'"},
	}
	for _, c := range cases {
		if got := c.l.Line(); got != c.want {
			t.Errorf("Line() = %q, want %q", got, c.want)
		}
	}
}

func dump(ls []Lesson) string {
	var s string
	for _, l := range ls {
		s += fmt.Sprintf("%s %s %s %s %v seen %d: %s\n", l.Kind, l.Host, l.OS, l.PackageManager, l.At.Format(time.TimeOnly), l.Seen, l.Text)
	}
	return s
}
