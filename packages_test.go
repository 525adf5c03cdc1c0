package nightshift_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// noRunnableExample are the library packages without a runnable Example
// (one with an "// Output:" comment), with the reason. Commands (package
// main) show their use in their help and testscripts instead.
var noRunnableExample = map[string]string{
	"internal/memv1":         "only its doc.go, which names the frozen copies below",
	"internal/memv1/distill": "a frozen copy of main's distiller before issue 22, kept only as a benchmark baseline",
	"internal/memv1/memory":  "a frozen copy of main's memory before issue 22, kept only as a benchmark baseline",
	"internal/nighttest":     "a test harness: every function takes a testing.TB and starts simulated hosts and a model server; batch's and fleet's tests show its use",
	"internal/sshtarget":     "starts a real sshd, which an Example cannot assume; its tests show its use",
	"internal/vllmref":       "runs python3 with jinja2 and node with the HF tokenizers addon, which an Example cannot assume; its Example compiles but does not run",
}

// TestPackageContracts: what docs/DEVELOPING.md says every package has —
// a package comment stating its contract, and a runnable Example — each
// library package has, but those noRunnableExample lists with the reason;
// and its layout table has a row for each package.
func TestPackageContracts(t *testing.T) {
	pkgs := map[string]bool{} // directories holding Go code
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			pkgs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		var comment, isMain, runnable bool
		for _, f := range files {
			af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(f, "_test.go") {
				for _, ex := range doc.Examples(af) {
					runnable = runnable || ex.Output != "" || ex.EmptyOutput
				}
				continue
			}
			isMain = isMain || af.Name.Name == "main"
			comment = comment || hasPackageComment(af)
		}
		if isMain {
			continue
		}
		if !comment {
			t.Errorf("package %s has no package comment stating its contract", dir)
		}
		reason, exempt := noRunnableExample[filepath.ToSlash(dir)]
		switch {
		case !runnable && !exempt:
			t.Errorf("package %s has no runnable Example (an Example func with an // Output: comment)", dir)
		case runnable && exempt:
			t.Errorf("package %s has a runnable Example now; remove it from noRunnableExample (%s)", dir, reason)
		}
	}
	layout, err := os.ReadFile("docs/DEVELOPING.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		name := filepath.ToSlash(dir)
		if name == "." {
			name = "nightshift"
		}
		if strings.HasPrefix(name, "internal/memv1/") || strings.HasPrefix(name, "_") || pkgIsMain(dir) {
			continue // memv1's row covers its frozen copies
		}
		if !strings.Contains(string(layout), "| `"+name+"`") {
			t.Errorf("docs/DEVELOPING.md's layout table has no row for package %s", name)
		}
	}
	for dir := range noRunnableExample {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("noRunnableExample lists %s: %v", dir, err)
		}
	}
}

// pkgIsMain reports whether dir holds a command.
func pkgIsMain(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly)
		return err == nil && af.Name.Name == "main"
	}
	return false
}

func hasPackageComment(f *ast.File) bool {
	return f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package ")
}
