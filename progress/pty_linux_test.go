package progress

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// openPTY opens a pseudo-terminal pair: the writer side a program sees as its
// terminal (pts) and the reader side (ptmx).
func openPTY(t *testing.T, cols int) (pts, ptmx *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		testenv.Unavailable(t, "no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	fd := int(ptmx.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		testenv.Unavailable(t, "no /dev/pts here: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: uint16(cols)}); err != nil {
		t.Fatalf("set the window size: %v", err)
	}
	return pts, ptmx
}

// TestAutoIsLiveOnATerminal: on a real pseudo-terminal Auto redraws in place
// and cuts lines to the terminal's width.
func TestAutoIsLiveOnATerminal(t *testing.T) {
	pts, ptmx := openPTY(t, 60)
	p, err := New(Config{Out: pts})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Live() {
		t.Fatal("Auto chose plain output on a terminal")
	}
	if p.cfg.Width != 60 {
		t.Fatalf("width %d, want the terminal's 60", p.cfg.Width)
	}
	p.Plan("web-1", 2)
	p.RuleStarted("web-1", "a_rule_with_a_rather_long_name_that_does_not_fit_in_sixty_columns")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// The terminal delivers the writes in pieces; read until both marks came.
	if err := ptmx.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatalf("set a read deadline on the pty: %v", err)
	}
	var out []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(out, []byte("\x1b[2K")) || !bytes.Contains(out, []byte("…")) {
		n, err := ptmx.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			t.Fatalf("no in-place redraw or no cut line on the terminal (%v): %q", err, out)
		}
	}
}
