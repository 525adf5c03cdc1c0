package safety

import (
	"path"
	"strings"

	"github.com/nightshift-dev/nightshift/shell"
)

// Symbolic links the command line itself makes (ln -s /etc ./e) are
// followed in the path operands of the commands after them (rm -rf ./e/*
// deletes the entries of /etc).

// throughLinks records the link c makes, if any, and returns c with the
// paths under a link recorded earlier rewritten to what it points to.
func throughLinks(c *shell.Command, links map[string]string) *shell.Command {
	out := c
	if len(links) > 0 && len(c.Args) > 1 {
		var args []shell.Word
		for i, a := range c.Args {
			if i > 0 {
				if r, ok := resolveLink(a, c.Dir, links); ok {
					if args == nil {
						args = append([]shell.Word(nil), c.Args...)
					}
					args[i] = r
				}
			}
		}
		if args != nil {
			cp := *c
			cp.Args = args
			out = &cp
		}
	}
	if progName(c) == "ln" {
		opts, ops, _ := optsOf("ln").Parse(c.Args[1:])
		_, sym := shell.Has(opts, "-s", "--symbolic")
		_, tdir := shell.Has(opts, "-t", "--target-directory")
		if sym && !tdir && len(ops) == 2 && ops[0].Kind == shell.Literal && ops[1].Kind == shell.Literal {
			link := shell.Abs(ops[1], c.Dir)
			if link.Kind == shell.Literal {
				target := ops[0].Value
				if !strings.HasPrefix(target, "/") {
					target = path.Join(path.Dir(link.Value), target) // relative to the link's directory
				}
				links[path.Clean(link.Value)] = path.Clean(target)
			}
		}
	}
	return out
}

// resolveLink rewrites a path operand that lies under a recorded link.
func resolveLink(w shell.Word, dir string, links map[string]string) (shell.Word, bool) {
	if w.Kind == shell.Unknown || strings.HasPrefix(w.Value, "-") {
		return w, false
	}
	a := shell.Abs(w, dir)
	if a.Kind == shell.Unknown {
		return w, false
	}
	v := path.Clean(a.Value)
	if a.Kind == shell.Pattern {
		v = path.Clean(a.Glob)
	}
	for link, target := range links {
		// Only paths through the link: the link itself names the link
		// (rm -f LINK removes the link).
		if strings.HasPrefix(v, link+"/") {
			r := a
			p := path.Join(target, strings.TrimPrefix(v, link))
			r.Value = p
			if a.Kind == shell.Pattern {
				r.Glob = p
			}
			return r, true
		}
	}
	return w, false
}
