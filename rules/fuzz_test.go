package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, and either returns a usable Set or
// ValidationErrors whose every entry names the file.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testdataDir, "*", "*.y*ml"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("rules:\n  - id: a\n    check: x\n    banned: &a [*a]\n"))
	f.Add([]byte("rules: &r\n  - *r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := Parse("f.yaml", data)
		if err != nil {
			var verrs ValidationErrors
			if !errors.As(err, &verrs) || len(verrs) == 0 {
				t.Fatalf("error is %T, want ValidationErrors: %v", err, err)
			}
			for _, e := range verrs {
				if e.File != "f.yaml" || e.Msg == "" {
					t.Fatalf("incomplete error %#v", e)
				}
			}
			return
		}
		if set.Len() == 0 {
			t.Fatal("empty set without error")
		}
		for _, id := range set.IDs() {
			r, ok := set.Get(id)
			if !ok || !idPattern.MatchString(r.ID) || r.Check == nil || strings.TrimSpace(r.Check.String()) == "" {
				t.Fatalf("invalid rule accepted: %+v", r)
			}
			if _, err := r.BanList(nil); err != nil {
				t.Fatalf("accepted rule has bad patterns: %v", err)
			}
		}
	})
}
