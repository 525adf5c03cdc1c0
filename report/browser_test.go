package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
)

// chromium runs headless Chromium on an HTML file with the given extra
// flags and returns its standard output. The deadline only guards against a
// hung browser; nothing is asserted about time.
func chromium(t *testing.T, html []byte, flags ...string) []byte {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Fatal("chromium not found: run scripts/install-test-deps.sh (Debian chromium)")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, html, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--hide-scrollbars", "--force-device-scale-factor=1",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
	}, flags...)
	args = append(args, "file://"+file)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.Bytes())
	}
	return stdout.Bytes()
}

var (
	svgRE       = regexp.MustCompile(`(?s)<svg class="chart" data-rule="([^"]*)".*?</svg>`)
	handlerRE   = regexp.MustCompile(`<[a-zA-Z][^<>]*\son[a-z]+\s*=`)
	pointsRE    = regexp.MustCompile(`<polyline class="tokens [^"]*" points="([^"]*)"`)
	attrValueRE = regexp.MustCompile(`"[^"]*"`)
)

// TestHTMLInChromium loads the report in headless Chromium and checks the
// DOM it built: every rule with attempts has its chart, with one line per
// host that made attempts, a point per attempt and the limit line; rules
// without attempts have none.
func TestHTMLInChromium(t *testing.T) {
	run := loadRun(t)
	var html bytes.Buffer
	if err := WriteHTML(&html, run); err != nil {
		t.Fatal(err)
	}
	dom := string(chromium(t, html.Bytes(), "--dump-dom"))
	if !strings.Contains(dom, "<title>Nightshift report — cis-level1-server</title>") {
		t.Fatalf("Chromium's DOM lacks the report's title:\n%.500s", dom)
	}
	charts := map[string]string{}
	for _, m := range svgRE.FindAllStringSubmatch(dom, -1) {
		charts[m[1]] = m[0]
	}
	for _, g := range byRule(run.Results) {
		svg, ok := charts[g.Rule]
		wantLines, wantPoints, limits := 0, 0, map[int]bool{}
		for _, r := range g.Results {
			if len(r.Attempts) > 0 {
				wantLines++
			}
			wantPoints += len(r.Attempts)
			for _, a := range r.Attempts {
				if a.Limit > 0 {
					limits[a.Limit] = true
				}
			}
		}
		if wantLines == 0 {
			if ok {
				t.Errorf("%s: a chart without attempts", g.Rule)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: no chart in the rendered DOM", g.Rule)
			continue
		}
		lines := pointsRE.FindAllStringSubmatch(svg, -1)
		if len(lines) != wantLines {
			t.Errorf("%s: %d token lines, want %d", g.Rule, len(lines), wantLines)
		}
		for _, l := range lines {
			if strings.TrimSpace(l[1]) == "" {
				t.Errorf("%s: a token line without points", g.Rule)
			}
		}
		if n := strings.Count(svg, `<circle class="point`); n != wantPoints {
			t.Errorf("%s: %d points, want %d", g.Rule, n, wantPoints)
		}
		if n := strings.Count(svg, `<line class="limit"`); n != len(limits) {
			t.Errorf("%s: %d limit lines, want %d", g.Rule, n, len(limits))
		}
	}
	if len(charts) != 3 {
		t.Errorf("%d charts in the DOM, want 3", len(charts))
	}
}

// TestHTMLInjectionInChromium checks in the browser's DOM that hostile text
// created no element.
func TestHTMLInjectionInChromium(t *testing.T) {
	var html bytes.Buffer
	if err := WriteHTML(&html, hostileRun()); err != nil {
		t.Fatal(err)
	}
	dom := string(chromium(t, html.Bytes(), "--dump-dom"))
	for _, bad := range []string{"<script", "<img", "<b>", "<svg onload"} {
		if strings.Contains(dom, bad) {
			t.Errorf("the rendered DOM has an injected %q", bad)
		}
	}
	// Event handlers as attributes of elements, with attribute values
	// (where the escaped text lives) blanked out.
	if m := handlerRE.FindString(attrValueRE.ReplaceAllString(dom, `""`)); m != "" {
		t.Errorf("the rendered DOM has an element with an event handler: %q", m)
	}
	if !strings.Contains(dom, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the rendered DOM does not show the hostile text as text")
	}
	if n := len(svgRE.FindAllString(dom, -1)); n != 1 {
		t.Errorf("%d charts, want 1", n)
	}
}

// TestChartPixels takes a screenshot and checks that the chart is painted:
// a long horizontal run of the limit colour (the dashed limit line) and the
// colour of the rule's token line.
func TestChartPixels(t *testing.T) {
	run := &Run{Name: "pixels", Results: []TaskResult{{
		Rule: "r", Host: "h", Outcome: nightshift.RuleNotFixed,
		Attempts: []Attempt{{Number: 1, PromptTokens: 2000, Limit: 8000}, {Number: 2, PromptTokens: 5000, Limit: 8000}, {Number: 3, PromptTokens: 7000, Limit: 8000}},
	}}}
	var html bytes.Buffer
	if err := WriteHTML(&html, run); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	chromium(t, html.Bytes(), "--window-size=1000,1000", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// The dashed limit line (8 px on, 5 off across the 616 px plot) puts
	// about 380 px of the limit colour on one row.
	limitRow, limitCount := fullestRow(img, 0xdb, 0x27, 0x77) // --limit
	if limitCount < 300 {
		t.Errorf("no limit line painted: the fullest row (%d) has %d px of the limit colour", limitRow, limitCount)
	}
	if _, dash := longestRun(img, 0xdb, 0x27, 0x77); dash < 6 || dash > 12 {
		t.Errorf("limit line is not dashed: longest run %d px", dash)
	}
	// The token line and its points, in the not-fixed colour.
	if n := countColour(img, 0xdc, 0x26, 0x26); n < 300 {
		t.Errorf("token line not painted: %d px of its colour", n)
	}
}

func same(img image.Image, x, y int, r, g, b uint8) bool {
	cr, cg, cb, _ := img.At(x, y).RGBA()
	return uint8(cr>>8) == r && uint8(cg>>8) == g && uint8(cb>>8) == b
}

// longestRun returns the row with the longest horizontal run of a colour.
func longestRun(img image.Image, r, g, b uint8) (row, length int) {
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		n := 0
		for x := bd.Min.X; x < bd.Max.X; x++ {
			if same(img, x, y, r, g, b) {
				n++
				if n > length {
					row, length = y, n
				}
			} else {
				n = 0
			}
		}
	}
	return row, length
}

// fullestRow returns the row with the most pixels of a colour.
func fullestRow(img image.Image, r, g, b uint8) (row, count int) {
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		if n := countRow(img, y, r, g, b); n > count {
			row, count = y, n
		}
	}
	return row, count
}

func countRow(img image.Image, y int, r, g, b uint8) int {
	n := 0
	for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
		if same(img, x, y, r, g, b) {
			n++
		}
	}
	return n
}

func countColour(img image.Image, r, g, b uint8) int {
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		n += countRow(img, y, r, g, b)
	}
	return n
}
