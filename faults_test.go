package nightshift_test

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// faultsDocs are the fault tables.
var faultsDocs = []string{"docs/faults.md"}

var (
	codeSpan    = regexp.MustCompile("`([^`]+)`")
	goTestRef   = regexp.MustCompile(`^([a-z0-9_./-]+)\.(Test[A-Za-z0-9_]*)$`)
	faultMarker = regexp.MustCompile(`^\s*(?://|#)\s*fault:\s*([a-z0-9-]+)\s*$`)
	testFunc    = regexp.MustCompile(`^func (Test[A-Za-z0-9_]*)\(`)
)

// faultRow is one row of a fault table: its ID and the tests it names.
type faultRow struct {
	file  string
	line  int
	id    string
	tests []string
}

// readFaultRows parses the tables of a fault document: each row whose
// first cell starts with a code span (the ID) and whose last cell names
// its tests as code spans.
func readFaultRows(t *testing.T, path string) []faultRow {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) && path != faultsDocs[0] {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []faultRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 6 {
			t.Errorf("%s:%d: %d cells, want 6 (fault | what the worker does | exit code | what the journal records | what resume does | test)", path, n, len(cells))
			continue
		}
		if strings.TrimSpace(cells[0]) == "fault" {
			continue // the header
		}
		id := codeSpan.FindStringSubmatch(cells[0])
		if id == nil || !strings.HasPrefix(strings.TrimSpace(cells[0]), "`") {
			t.Errorf("%s:%d: the fault cell does not start with its ID in a code span", path, n)
			continue
		}
		r := faultRow{file: path, line: n, id: id[1]}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[5], -1) {
			r.tests = append(r.tests, m[1])
		}
		if len(r.tests) == 0 {
			t.Errorf("%s:%d: row %s names no test", path, n, r.id)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// testExists reports whether ref names a test in the tree: a testscript
// file, or dir.TestName with "func TestName(" in a _test.go file of dir.
func testExists(ref string) (bool, error) {
	if strings.HasSuffix(ref, ".txtar") {
		_, err := os.Stat(ref)
		return err == nil, nil
	}
	m := goTestRef.FindStringSubmatch(ref)
	if m == nil {
		return false, fmt.Errorf("%q is neither package/path.TestName nor a .txtar file", ref)
	}
	dir := m[1]
	if dir == "nightshift" {
		dir = "."
	}
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return false, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		if strings.Contains(string(b), "\nfunc "+m[2]+"(") {
			return true, nil
		}
	}
	return false, nil
}

// faultMark is a `// fault: ID` comment in a test file (`# fault: ID` in a
// testscript) and the test it marks: the test function it documents, else
// the one it is inside; a testscript marks itself.
type faultMark struct {
	pos, id, test string
}

func findFaultMarks(t *testing.T) []faultMark {
	t.Helper()
	var marks []faultMark
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		goTest := strings.HasSuffix(path, "_test.go")
		if !goTest && !strings.HasSuffix(path, ".txtar") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(b), "\n")
		enclosing := ""
		for i, l := range lines {
			if m := testFunc.FindStringSubmatch(l); m != nil {
				enclosing = m[1]
			}
			m := faultMarker.FindStringSubmatch(l)
			if m == nil || (goTest && !strings.HasPrefix(strings.TrimSpace(l), "//")) || (!goTest && !strings.HasPrefix(l, "#")) {
				continue
			}
			mark := faultMark{pos: fmt.Sprintf("%s:%d", path, i+1), id: m[1], test: path}
			if goTest {
				test := enclosing
				for _, next := range lines[i+1:] {
					if strings.HasPrefix(strings.TrimSpace(next), "//") {
						continue
					}
					if f := testFunc.FindStringSubmatch(next); f != nil {
						test = f[1]
					}
					break
				}
				if test == "" {
					t.Errorf("%s: fault marker %s is not on or in a test function", mark.pos, mark.id)
					continue
				}
				dir := filepath.Dir(path)
				if dir == "." {
					dir = "nightshift"
				}
				mark.test = filepath.ToSlash(dir) + "." + test
			}
			marks = append(marks, mark)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return marks
}

// TestFaultsTable keeps docs/faults.md honest: every test a row names
// exists, row IDs are unique, and every test marked as a fault's test is
// named in that fault's row.
func TestFaultsTable(t *testing.T) {
	var rows []faultRow
	for _, doc := range faultsDocs {
		rows = append(rows, readFaultRows(t, doc)...)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no rows", faultsDocs[0])
	}
	byID := map[string]faultRow{}
	for _, r := range rows {
		if first, dup := byID[r.id]; dup {
			t.Errorf("%s:%d: ID %s is also the row at %s:%d", r.file, r.line, r.id, first.file, first.line)
		}
		byID[r.id] = r
		for _, ref := range r.tests {
			ok, err := testExists(ref)
			switch {
			case err != nil:
				t.Errorf("%s:%d: row %s: %v", r.file, r.line, r.id, err)
			case !ok:
				t.Errorf("%s:%d: row %s names %s, which does not exist", r.file, r.line, r.id, ref)
			}
		}
	}
	marks := findFaultMarks(t)
	for _, m := range marks {
		r, ok := byID[m.id]
		switch {
		case !ok:
			t.Errorf("%s: %s is marked as the test of fault %s, which no row of %s has", m.pos, m.test, m.id, strings.Join(faultsDocs, " or "))
		case !slices.Contains(r.tests, m.test):
			t.Errorf("%s: %s is marked as the test of fault %s, but %s:%d does not name it", m.pos, m.test, m.id, r.file, r.line)
		}
	}
	t.Logf("%d fault rows, %d marked tests", len(rows), len(marks))
}
