package scap

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// Kernel arguments a boot-configuration check names. A grub2_*_argument
// check reads GRUB_CMDLINE_LINUX(_DEFAULT) in /etc/default/grub (or the
// linux lines of grub.cfg) and states the argument it wants in a
// subexpression (^(?:.*\s)?mce=0(?:\s.*)?$), a literal or a concat whose
// value part comes from an XCCDF value (^(?:.*\s)?l1tf= + var_l1tf_options
// + (?:\s.*)?$), or in the object's own pattern (\bapparmor=1\b). The
// names of those arguments (mce, l1tf, apparmor, security) are what a fix
// for the rule may add to or change on the kernel command line
// (safety.KernelArgPrefix keys; package safety refuses any other).

// bootConfig reports whether p is a file that sets the kernel command line.
func bootConfig(p string) bool {
	switch {
	case p == "/etc/default/grub" || p == "/etc/default/grub.d" || path.Dir(p) == "/etc/default/grub.d",
		p == "/etc/kernel/cmdline", p == "/boot/grub/grub.cfg", p == "/boot/grub2/grub.cfg":
		return true
	}
	return false
}

// argAssign is an argument with a value in a pattern's text (regular
// expression escapes of "." and "-" already removed): a lower-case name
// not preceded by a letter, digit or one of the name's characters, then "=".
var argAssign = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.\-\\])([a-z][a-z0-9_.\-]*)=`)

// argBare is an argument without a value between the optional leading and
// trailing parts of SSG's argument patterns: (?:.*\s)?nousb(?:\s.*)?$.
var argBare = regexp.MustCompile(`\)\?([a-z][a-z0-9_.\-]*)\(\?:\\s`)

// argWord is an argument between word boundaries: (?!.*\bnosmap\b).
var argWord = regexp.MustCompile(`\\b([a-z][a-z0-9_.\-]*)\\b`)

// kernelArgs returns the names of the kernel arguments the texts name,
// sorted, without duplicates.
func kernelArgs(texts []string) []string {
	var out []string
	for _, t := range texts {
		t = strings.NewReplacer(`\.`, ".", `\-`, "-").Replace(t)
		for _, m := range argWord.FindAllStringSubmatch(t, -1) {
			out = append(out, m[1])
		}
		u := strings.ReplaceAll(t, `\b`, " ")
		for _, m := range argAssign.FindAllStringSubmatch(u, -1) {
			out = append(out, m[1])
		}
		for _, m := range argBare.FindAllStringSubmatch(u, -1) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// stateTexts adds a text state's subexpressions: a literal, or the
// literal components of the local variable it refers to.
func (w *scopeWalk) stateTexts(n ovalNode) {
	for _, c := range n.Children {
		if c.XMLName.Local != "subexpression" {
			continue
		}
		v := c.attr("var_ref")
		if v == "" {
			w.texts = append(w.texts, strings.TrimSpace(c.Text))
			continue
		}
		lv, ok := w.byID[v]
		if !ok || lv.XMLName.Local != "local_variable" {
			continue
		}
		var walk func(x ovalNode)
		walk = func(x ovalNode) {
			if x.XMLName.Local == "literal_component" {
				w.texts = append(w.texts, strings.TrimSpace(x.Text))
			}
			for _, y := range x.Children {
				walk(y)
			}
		}
		walk(lv)
	}
}
