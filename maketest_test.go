package nightshift_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// makeUnit is what the Makefile's unit target must run, through its
// prerequisites (one after another): every test under -race but those E2E
// names, and those, without -race, in cmd/worker; then the FULL names again
// without -race in FULLPKGS (under -race they check a sample).
var makeUnit = map[string]string{
	"unit-race": "$(GO) test -race -count=1 -timeout 30m -skip '$(E2E)' ./...",
	"unit-e2e":  "$(GO) test -count=1 -timeout 30m -parallel 3 -run '$(E2E)' ./cmd/worker",
	"unit-full": "$(GO) test -count=1 -timeout 30m -run '$(FULL)' $(FULLPKGS)",
}

// TestMakeTestRunsEveryTest: `make test` runs every test of the module
// exactly once. Its unit target skips the E2E list in the race-enabled run
// of ./... and runs that list alone in ./cmd/worker, so the list must name
// only tests that cmd/worker defines (a name it matched elsewhere would
// run nowhere), and each name it gives must still be one (a renamed test
// would run under -race, and the list would go stale).
func TestMakeTestRunsEveryTest(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^E2E := (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no E2E := line")
	}
	list := strings.ReplaceAll(string(m[1]), "$$", "$")
	re, err := regexp.Compile(list)
	if err != nil {
		t.Fatalf("E2E %q: %v", list, err)
	}
	if !regexp.MustCompile(`(?m)^unit: unit-race unit-e2e unit-full$`).Match(mk) {
		t.Error("the Makefile's unit target is not `unit: unit-race unit-e2e unit-full`")
	}
	for target, want := range makeUnit {
		recipe := regexp.MustCompile(`(?m)^` + target + `:\n((?:\t.*\n)+)`).FindSubmatch(mk)
		if recipe == nil {
			t.Errorf("the Makefile has no %s target", target)
			continue
		}
		if got := strings.TrimSpace(string(recipe[1])); got != want {
			t.Errorf("the %s target runs\n\t%s\nwant\n\t%s", target, got, want)
		}
	}
	if !regexp.MustCompile(`(?m)^test: deps\n\t.*\$\(MAKE\).* lint unit$`).Match(mk) {
		t.Error("the Makefile's test target does not run deps, then lint and unit")
	}

	names := strings.Split(strings.TrimSuffix(strings.TrimPrefix(list, "^("), ")$"), "|")
	defined := map[string][]string{} // a test function matching E2E → the directories defining one
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && re.MatchString(fn.Name.Name) {
				defined[fn.Name.Name] = append(defined[fn.Name.Name], filepath.Dir(path))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, dirs := range defined {
		for _, dir := range dirs {
			if dir != filepath.Join("cmd", "worker") {
				t.Errorf("E2E matches %s in %s: the race-enabled run skips it and the E2E run (./cmd/worker) does not reach it", name, dir)
			}
		}
	}
	for _, name := range names {
		if !slices.Contains(defined[name], filepath.Join("cmd", "worker")) || !strings.HasPrefix(name, "Test") {
			t.Errorf("E2E names %s, which is no test function of cmd/worker", name)
		}
	}
}

// TestMakeFullReadsRace: the Makefile's FULL tests run under -race with the
// rest (unit-race, on a sample) and again without it (unit-full, on the
// whole set), so each FULL name must be a test function of a FULLPKGS
// package that reads testenv.Race: a name that is none would leave its
// full set run nowhere, and a test that does not read testenv.Race would
// only run twice.
func TestMakeFullReadsRace(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	full := regexp.MustCompile(`(?m)^FULL +:= \^\((.+)\)\$\$$`).FindSubmatch(mk)
	pkgs := regexp.MustCompile(`(?m)^FULLPKGS +:= (.+)$`).FindSubmatch(mk)
	if full == nil || pkgs == nil {
		t.Fatal("the Makefile has no `FULL := ^(A|B)$$` and `FULLPKGS := ./dir …` lines")
	}
	reads := map[string]bool{} // FULL test name → it reads testenv.Race
	for _, dir := range strings.Fields(string(pkgs[1])) {
		files, err := filepath.Glob(filepath.Join(filepath.FromSlash(dir), "*_test.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("FULLPKGS names %s, which has no test files (%v)", dir, err)
		}
		for _, path := range files {
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Race" {
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == "testenv" {
							reads[fn.Name.Name] = true
						}
					}
					return true
				})
				if _, seen := reads[fn.Name.Name]; !seen {
					reads[fn.Name.Name] = false
				}
			}
		}
	}
	for _, name := range strings.Split(string(full[1]), "|") {
		r, ok := reads[name]
		switch {
		case !ok:
			t.Errorf("FULL names %s, which is no test function of %s", name, pkgs[1])
		case !r:
			t.Errorf("FULL names %s, which does not read testenv.Race (it would check the same set twice)", name)
		}
	}
}
