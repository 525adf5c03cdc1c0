package nightshift_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// makeUnit is what the Makefile's unit target must run, through its
// prerequisites (one after another): every test of every package (RACEPKGS,
// checked by TestMakeRacePackages) under -race but those NORACE names, and
// those, without -race, in their packages (NORACEPKGS); then the FULL names
// again without -race in FULLPKGS (under -race they check a sample).
var makeUnit = map[string]string{
	"unit-race":   "$(GO) test -race -count=1 -timeout 30m -skip '$(NORACE)' $(RACEPKGS)",
	"unit-norace": "$(GO) test -count=1 -timeout 30m -parallel 3 -run '$(NORACE)' $(addprefix ./,$(NORACEPKGS))",
	"unit-full":   "$(GO) test -count=1 -timeout 30m -run '$(FULL)' $(FULLPKGS)",
}

// TestMakeTestRunsEveryTest: `make test` runs every test of the module
// exactly once. Its unit target skips the NORACE pattern in the race-enabled
// run of every package and runs that pattern alone in NORACEPKGS, so, read
// from what make runs (make -n): -skip and -run get the same pattern; the
// pattern is the NORACE.<dir> lists, one per NORACEPKGS package; each name
// of NORACE.<dir> is a test function of ./<dir> (a renamed test would run
// under -race, and the list would go stale); and no test function the
// pattern matches is outside the list of its own package (outside
// NORACEPKGS it would run nowhere).
func TestMakeTestRunsEveryTest(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^unit: unit-race unit-norace unit-full$`).Match(mk) {
		t.Error("the Makefile's unit target is not `unit: unit-race unit-norace unit-full`")
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

	// The lists as written: NORACE.<dir> := A|B, and NORACEPKGS := dir ….
	lists := map[string][]string{} // dir (slash-separated) → the test names its list gives
	for _, m := range regexp.MustCompile(`(?m)^NORACE\.(\S+) *:= *(\S+)$`).FindAllSubmatch(mk, -1) {
		lists[string(m[1])] = strings.Split(string(m[2]), "|")
	}
	pkgsLine := regexp.MustCompile(`(?m)^NORACEPKGS := (.+)$`).FindSubmatch(mk)
	if pkgsLine == nil || len(lists) == 0 {
		t.Fatal("the Makefile has no NORACEPKGS := line or no NORACE.<dir> := lists")
	}
	pkgs := strings.Fields(string(pkgsLine[1]))
	if got, want := slices.Sorted(slices.Values(pkgs)), slices.Sorted(maps.Keys(lists)); !slices.Equal(got, want) {
		t.Errorf("NORACEPKGS is %v, and the NORACE.<dir> lists are of %v: each package needs its list and each list its package", got, want)
	}

	// What make runs.
	out, err := exec.Command("make", "--no-print-directory", "-n", "unit-race", "unit-norace").Output()
	if err != nil {
		t.Fatalf("make -n unit-race unit-norace: %v", err)
	}
	skip := regexp.MustCompile(`-race .*-skip '([^']+)'`).FindSubmatch(out)
	run := regexp.MustCompile(`(?m)-parallel 3 -run '([^']+)' (.+)$`).FindSubmatch(out)
	if skip == nil || run == nil {
		t.Fatalf("make -n: no -skip in unit-race or no -run in unit-norace:\n%s", out)
	}
	if string(skip[1]) != string(run[1]) {
		t.Errorf("unit-race skips %s and unit-norace runs %s: they must be one pattern", skip[1], run[1])
	}
	var all []string
	for _, dir := range pkgs {
		all = append(all, lists[dir]...)
	}
	if want := "^(" + strings.Join(all, "|") + ")$"; string(run[1]) != want {
		t.Errorf("make runs the NORACE pattern %s, want the NORACE.<dir> lists in NORACEPKGS' order, %s", run[1], want)
	}
	var runDirs []string
	for _, f := range strings.Fields(string(run[2])) {
		runDirs = append(runDirs, strings.TrimPrefix(f, "./"))
	}
	if !slices.Equal(runDirs, pkgs) {
		t.Errorf("unit-norace runs the packages %v, want NORACEPKGS %v", runDirs, pkgs)
	}
	re, err := regexp.Compile(string(run[1]))
	if err != nil {
		t.Fatalf("NORACE %q: %v", run[1], err)
	}

	defined := map[string]map[string]bool{} // dir → its test functions matching NORACE
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
				dir := filepath.ToSlash(filepath.Dir(path))
				if defined[dir] == nil {
					defined[dir] = map[string]bool{}
				}
				defined[dir][fn.Name.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, names := range defined {
		for name := range names {
			switch {
			case !slices.Contains(pkgs, dir):
				t.Errorf("NORACE matches %s in %s: the race-enabled run skips it and the NORACE run (%v) does not reach it", name, dir, pkgs)
			case !slices.Contains(lists[dir], name):
				t.Errorf("NORACE matches %s in %s, which NORACE.%s does not name: list it there or rename it", name, dir, dir)
			}
		}
	}
	for dir, names := range lists {
		for _, name := range names {
			if !defined[dir][name] || !strings.HasPrefix(name, "Test") {
				t.Errorf("NORACE.%s names %s, which is no test function of ./%s", dir, name, dir)
			}
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

// TestMakeRacePackages: unit-race runs the tests of every package of the
// module once (RACEPKGS: go list ./..., HEAVY's first in HEAVY's order,
// the longest under -race first so that no long one runs alone at the end).
// It reads what make would run (make -n), so a HEAVY name that is no
// package, one listed twice, or a package left out shows here.
func TestMakeRacePackages(t *testing.T) {
	out, err := exec.Command("make", "--no-print-directory", "-n", "unit-race").Output()
	if err != nil {
		t.Fatalf("make -n unit-race: %v", err)
	}
	fields := strings.Fields(string(out))
	if slices.Contains(fields, "./...") {
		t.Fatalf("unit-race runs ./..., not the packages longest first: %s", out)
	}
	var got []string
	for _, f := range fields {
		if strings.HasPrefix(f, "github.com/nightshift-dev/nightshift") {
			got = append(got, f)
		}
	}
	list, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	want := strings.Fields(string(list))
	if sorted := slices.Sorted(slices.Values(got)); !slices.Equal(sorted, want) {
		t.Errorf("unit-race runs the packages\n\t%v\nwant each of go list ./... once:\n\t%v", got, want)
	}
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	heavy := regexp.MustCompile(`(?m)^HEAVY +:= (.+)$`).FindSubmatch(mk)
	if heavy == nil {
		t.Fatal("the Makefile has no HEAVY := line")
	}
	for i, name := range strings.Fields(string(heavy[1])) {
		if i >= len(got) || got[i] != "github.com/nightshift-dev/nightshift/"+name {
			t.Errorf("unit-race does not start with HEAVY's %s (package %d of %v)", name, i+1, got)
		}
	}
}

// TestMakeVetsHFNative: lint vets the packages with hf_native files
// (HFNATIVEPKGS) with that tag, and only them, so every directory with a
// file whose build constraint names hf_native must be in the list, and no
// file outside them may use what only those files define (Native and
// NewNative of package served): then vetting the rest with the tag would check what
// vetting it without the tag does.
func TestMakeVetsHFNative(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^HFNATIVEPKGS := (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no HFNATIVEPKGS := line")
	}
	listed := strings.Fields(string(m[1]))
	tagged := map[string]bool{} // directory (./dir) → it has hf_native files
	constraint := regexp.MustCompile(`(?m)^//go:build .*\bhf_native\b`)
	nativeAPI := regexp.MustCompile(`\bserved\.(Native|NewNative)\b`)
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir := "./" + filepath.ToSlash(filepath.Dir(path))
		if constraint.Match(b) {
			tagged[dir] = true
		}
		if nativeAPI.Match(b) {
			t.Errorf("%s uses the hf_native API of served: vet it with the tag too (HFNATIVEPKGS)", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range tagged {
		if !slices.Contains(listed, dir) {
			t.Errorf("%s has hf_native files, and HFNATIVEPKGS (%v) does not name it", dir, listed)
		}
	}
	for _, dir := range listed {
		if !tagged[dir] {
			t.Errorf("HFNATIVEPKGS names %s, which has no hf_native file", dir)
		}
	}
}
