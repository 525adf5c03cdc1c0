package safety_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/internal/goldenfile"
	"github.com/nightshift-dev/nightshift/internal/ssgfix"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// ssgFixesFile is every bash fix SCAP Security Guide 0.1.76 ships for the
// Debian 12 datastream, exactly as OpenSSH's disposable Debian 12 target
// (internal/debtarget: bookworm, OpenSCAP 1.3.7, ssg-debian 0.1.76-1)
// prints it with
//
//	oscap xccdf generate fix --fix-type bash \
//	    --tailoring-file ALL-RULES.xml --profile xccdf_nightshift_profile_all \
//	    /usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml
//
// where ALL-RULES.xml is a tailoring whose one profile selects every rule of
// the benchmark (allRulesTailoring). It is OpenSCAP's own output, byte for
// byte, so ssgfix.Parse (the tests' parser of SSG's fixes) splits it
// into the per-rule fix texts the ban check is given; rules without a bash
// fix appear as OpenSCAP's "FIX FOR THIS RULE ... IS MISSING!" placeholder
// and are skipped by that parser. TestSSGFixesMatchTarget regenerates it
// (go test -run TestSSGFixesMatchTarget -update ./safety as root).
const ssgFixesFile = "../testdata/safety/ssg-debian12-bash-fixes.txt"

const allRulesProfile = "xccdf_nightshift_profile_all"

var ruleID = regexp.MustCompile(`<xccdf-1\.2:Rule [^>]*\bid="(xccdf_org\.ssgproject\.content_rule_[^"]+)"`)

// allRulesTailoring returns an XCCDF 1.2 tailoring of the datastream at
// dsPath (as the target sees it) whose profile allRulesProfile selects every
// rule in datastream (its text), and the number of rules.
func allRulesTailoring(datastream []byte, dsPath string) (string, int) {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<xccdf-1.2:Tailoring xmlns:xccdf-1.2="http://checklists.nist.gov/xccdf/1.2" id="xccdf_nightshift_tailoring_all">` + "\n")
	fmt.Fprintf(&b, "<xccdf-1.2:benchmark href=%q/>\n", dsPath)
	b.WriteString(`<xccdf-1.2:version time="2025-01-01T00:00:00">1</xccdf-1.2:version>` + "\n")
	fmt.Fprintf(&b, "<xccdf-1.2:Profile id=%q>\n<xccdf-1.2:title>every rule</xccdf-1.2:title>\n", allRulesProfile)
	seen := map[string]bool{}
	for _, m := range ruleID.FindAllSubmatch(datastream, -1) {
		id := string(m[1])
		if seen[id] {
			continue
		}
		seen[id] = true
		fmt.Fprintf(&b, "<xccdf-1.2:select idref=%q selected=\"true\"/>\n", id)
	}
	b.WriteString("</xccdf-1.2:Profile>\n</xccdf-1.2:Tailoring>\n")
	return b.String(), len(seen)
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestSSGFixesMatchTarget regenerates the SSG fixes on a fresh disposable
// Debian 12 target and requires the committed file to be identical, byte
// for byte (so the rule set, the fix texts and the SSG and OpenSCAP
// versions all match). It costs one target start (2-3 s from the cached
// root; about 2 minutes the first time, to build it) and one oscap run
// over all 591 rules (about 4 s), so CI runs it in full. It needs root (the
// target uses namespaces and chroot): as non-root it skips, unless CI is
// set, when it fails.
func TestSSGFixesMatchTarget(t *testing.T) {
	testenv.NeedRoot(t, "the disposable Debian 12 target")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tg, err := debtarget.Start(ctx, debtarget.Options{Log: testLog{t}})
	if err != nil {
		t.Fatalf("start the Debian 12 target: %v", err)
	}
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Errorf("close the target: %v", err)
		}
	})
	ds, err := os.ReadFile(filepath.Join(tg.Root, debtarget.DatastreamPath))
	if err != nil {
		t.Fatal(err)
	}
	tailoring, nRules := allRulesTailoring(ds, debtarget.DatastreamPath)
	if nRules == 0 {
		t.Fatalf("no rules found in %s", debtarget.DatastreamPath)
	}
	// The target's /root is a plain directory of its root (only /dev, /proc,
	// /sys, /run and /tmp are mounted over), so the file written here is
	// the one the target reads.
	const tailoringPath = "/root/nightshift-all-rules-tailoring.xml"
	if err := os.WriteFile(filepath.Join(tg.Root, tailoringPath), []byte(tailoring), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := tg.SSHConfig()
	cfg.CommandTimeout = 5 * time.Minute
	cfg.OutputCap = 16 << 20
	c, err := sshexec.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmd := "oscap xccdf generate fix --fix-type bash --tailoring-file " + tailoringPath +
		" --profile " + allRulesProfile + " " + debtarget.DatastreamPath
	r, err := c.Run(ctx, cmd)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	if r.ExitCode != 0 || r.StdoutCut != 0 {
		t.Fatalf("%s: exit %d, %d bytes of output cut: %s", cmd, r.ExitCode, r.StdoutCut, r.Stderr)
	}
	fixes, err := ssgfix.Parse(r.Stdout)
	if err != nil {
		t.Fatalf("parse the generated fixes: %v", err)
	}
	if n := strings.Count(r.Stdout, "\n# BEGIN fix ("); n != nRules {
		t.Errorf("the script has %d fixes for %d selected rules", n, nRules)
	}
	t.Logf("SSG Debian 12: %d rules, %d with a bash fix", nRules, len(fixes))
	goldenfile.Check(t, ssgFixesFile, []byte(r.Stdout))
}
