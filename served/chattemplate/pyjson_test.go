package chattemplate

import (
	"bufio"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestPythonJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"object spacing", `{"a":1,"b":[true,false,null]}`, `{"a": 1, "b": [true, false, null]}`},
		{"key order kept", `{"z":1,"a":2,"m":3}`, `{"z": 1, "a": 2, "m": 3}`},
		{"repeated key: first position, last value", `{"a":1,"b":2,"a":3}`, `{"a": 3, "b": 2}`},
		{"empty containers", `[{},[],""]`, `[{}, [], ""]`},
		{"whitespace", " \t\r\n{ \"a\" :\n 1 }\n", `{"a": 1}`},
		{"float 0.1", `0.1`, `0.1`},
		{"float 1.0", `1.0`, `1.0`},
		{"float 1e-07", `1E-7`, `1e-07`},
		{"float 2.5e+20", `2.5e20`, `2.5e+20`},
		{"float 1e16", `1e16`, `1e+16`},
		{"float 1e15", `1e15`, `1000000000000000.0`},
		{"float 0.0001", `1e-4`, `0.0001`},
		{"float 1e-05", `0.00001`, `1e-05`},
		{"float -0.0", `-0.0`, `-0.0`},
		{"float 0e0", `0e0`, `0.0`},
		{"float overflow", `1e400`, `Infinity`},
		{"float negative overflow", `-1e400`, `-Infinity`},
		{"float underflow", `1e-400`, `0.0`},
		{"float shortest", `0.30000000000000004`, `0.30000000000000004`},
		{"float long mantissa", `3.14159265358979323846264338327950288`, `3.141592653589793`},
		{"float smallest", `5e-324`, `5e-324`},
		{"float largest", `1.7976931348623157e308`, `1.7976931348623157e+308`},
		{"int exact", `12345678901234567890123456789`, `12345678901234567890123456789`},
		{"int negative zero", `-0`, `0`},
		{"int negative", `-42`, `-42`},
		{"NaN and infinities", `[NaN,Infinity,-Infinity]`, `[NaN, Infinity, -Infinity]`},
		{"escapes decoded and re-escaped", `"\"\\\/\b\f\n\r\t"`, `"\"\\/\b\f\n\r\t"`},
		{"control chars as lower-case \\u00XX", `"\u0001\u001F\u007f"`, "\"\\u0001\\u001f\x7f\""},
		{"non-ASCII kept", `"caf\u00e9 日本 🔒"`, `"café 日本 🔒"`},
		{"U+2028 kept", `"a\u2028b"`, "\"a\u2028b\""},
		{"surrogate pair", `"\ud83d\ude00"`, `"😀"`},
		{"upper-case hex escape", `"\u00C9"`, `"É"`},
		{"string top level", `"just text"`, `"just text"`},
		{"invalid UTF-8 read as U+FFFD per byte", "\"a\xff\xfeb\"", "\"a\uFFFD\uFFFDb\""},
		{"HTML characters not escaped", `"<a href='x'>&</a>"`, `"<a href='x'>&</a>"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PythonJSON(tt.in)
			if err != nil {
				t.Fatalf("PythonJSON(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("PythonJSON(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPythonJSONErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     error
	}{
		{"empty", ``, ErrInvalidJSON},
		{"only space", "  ", ErrInvalidJSON},
		{"extra data", `{}{}`, ErrInvalidJSON},
		{"trailing comma in object", `{"a":1,}`, ErrInvalidJSON},
		{"trailing comma in array", `[1,]`, ErrInvalidJSON},
		{"single quotes", `{'a':1}`, ErrInvalidJSON},
		{"leading zero", `01`, ErrInvalidJSON},
		{"bare fraction", `.5`, ErrInvalidJSON},
		{"dot without digits", `1.`, ErrInvalidJSON},
		{"plus sign", `+1`, ErrInvalidJSON},
		{"lower-case nan", `nan`, ErrInvalidJSON},
		{"raw newline in string", "\"a\nb\"", ErrInvalidJSON},
		{"bad escape", `"\x41"`, ErrInvalidJSON},
		{"short unicode escape", `"\u12"`, ErrInvalidJSON},
		{"unterminated string", `"abc`, ErrInvalidJSON},
		{"byte order mark", "\ufeff{}", ErrInvalidJSON},
		{"non-breaking space", "\u00a0[]", ErrInvalidJSON},
		{"missing colon", `{"a" 1}`, ErrInvalidJSON},
		{"4301-digit integer", strings.Repeat("1", 4301), ErrIntTooLong},
		{"too deep", strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1), ErrTooDeep},
		{"lone high surrogate", `"\ud800"`, ErrLoneSurrogate},
		{"lone low surrogate", `["\udc00"]`, ErrLoneSurrogate},
		{"syntax error after lone surrogate wins", `["\ud800",]`, ErrInvalidJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PythonJSON(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("PythonJSON(%.40q) = %q, %v; want error %v", tt.in, got, err, tt.want)
			}
			var se *SyntaxError
			if errors.As(err, &se) != (tt.want == ErrInvalidJSON) {
				t.Errorf("error %v: *SyntaxError %v, want %v", err, errors.As(err, &se), tt.want == ErrInvalidJSON)
			}
		})
	}
	deep := strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth)
	if _, err := PythonJSON(deep); err != nil {
		t.Errorf("nesting of exactly MaxJSONDepth: %v", err)
	}
	if _, err := PythonJSON(strings.Repeat("9", 4300)); err != nil {
		t.Errorf("4300-digit integer: %v", err)
	}
}

// TestPythonJSONGolden checks PythonJSON against Python's own
// json.dumps(json.loads(s), ensure_ascii=False) over the corpus
// scripts/render-chat.py writes.
func TestPythonJSONGolden(t *testing.T) {
	t.Parallel()
	n := 0
	readJSONLines(t, "pyjson.golden.jsonl", func(line []byte) {
		var c struct {
			In    string  `json:"in"`
			Out   *string `json:"out"`
			Error string  `json:"error"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("decode pyjson golden: %v", err)
		}
		n++
		got, err := PythonJSON(c.In)
		tree, treeErr := pythonJSONTree(c.In)
		fast, fastOK := appendPythonFast(nil, c.In)
		if c.Out != nil {
			if err != nil || got != *c.Out {
				t.Errorf("PythonJSON(%.60q) = %.80q, %v; Python gives %.80q", c.In, got, err, *c.Out)
			}
			if treeErr != nil || tree != *c.Out {
				t.Errorf("reference parser(%.60q) = %.80q, %v; Python gives %.80q", c.In, tree, treeErr, *c.Out)
			}
			if fastOK && string(fast) != *c.Out {
				t.Errorf("fast path(%.60q) = %.80q; Python gives %.80q", c.In, fast, *c.Out)
			}
			return
		}
		if fastOK {
			t.Errorf("fast path accepts %.60q, which Python refuses", c.In)
		}
		want := map[string]error{"syntax": ErrInvalidJSON, "int_digits": ErrIntTooLong, "surrogate": ErrLoneSurrogate}[c.Error]
		if want == nil {
			t.Fatalf("unknown error kind %q", c.Error)
		}
		if !errors.Is(err, want) || !errors.Is(treeErr, want) {
			t.Errorf("PythonJSON(%.60q) = %.40q, %v (reference parser: %v); Python fails with %s", c.In, got, err, treeErr, c.Error)
		}
	})
	if n < 500 {
		t.Fatalf("only %d pyjson cases; regenerate with %q", n, regenerate)
	}
}

// TestPyFloatGolden checks float formatting against Python's repr for random
// bit patterns and human-scale values.
func TestPyFloatGolden(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join(chatDir, "floats.golden.txt"))
	if err != nil {
		t.Fatalf("golden file missing (regenerate with %q): %v", regenerate, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		hexBits, want, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("bad line %q", sc.Text())
		}
		bits, err := strconv.ParseUint(hexBits, 16, 64)
		if err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		n++
		if got := string(appendPyFloat(nil, math.Float64frombits(bits))); got != want {
			t.Errorf("float %s: got %s, Python gives %s", hexBits, got, want)
		}
	}
	if n < 3000 {
		t.Fatalf("only %d float cases; regenerate with %q", n, regenerate)
	}
}

// pythonJSONTree is PythonJSON without the fast path.
func pythonJSONTree(text string) (string, error) {
	v, err := parsePython(wireString(text))
	if err != nil {
		return "", err
	}
	return string(v.appendPython(nil)), nil
}

func FuzzPythonJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5, "x", null, true]}`, `NaN`, `-Infinity`, `"\ud83d\ude00"`, `1e400`,
		`{"a":1,"a":2}`, `[[[]]]`, `"\u0000\u2028"`, `-0.0`, `12345678901234567890`, `{"cmd":"ls -la","reason":"é"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		// The one-pass fast path agrees with the reference parser.
		tree, treeErr := pythonJSONTree(in)
		if fast, ok := appendPythonFast(nil, wireString(in)); ok && (treeErr != nil || string(fast) != tree) {
			t.Fatalf("fast path gives %q, reference parser %q, %v", fast, tree, treeErr)
		}
		out, err := PythonJSON(in)
		if (err == nil) != (treeErr == nil) || out != tree {
			t.Fatalf("PythonJSON = %q, %v; reference parser %q, %v", out, err, tree, treeErr)
		}
		if err != nil {
			if errors.Is(err, ErrInvalidJSON) && json.Valid([]byte(in)) {
				t.Fatalf("Go accepts %q but PythonJSON reports %v", in, err)
			}
			return
		}
		// The output is read back to the same value: re-serialising is a no-op.
		again, err := PythonJSON(out)
		if err != nil {
			t.Fatalf("PythonJSON(%q) = %q, which does not parse back: %v", in, out, err)
		}
		if again != out {
			t.Fatalf("not stable: %q -> %q -> %q", in, out, again)
		}
		if !strings.Contains(out, "NaN") && !strings.Contains(out, "Infinity") && !json.Valid([]byte(out)) {
			t.Fatalf("PythonJSON(%q) = %q is not valid JSON", in, out)
		}
	})
}
