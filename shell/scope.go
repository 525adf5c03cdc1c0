package shell

import (
	"maps"
	"strings"
)

// Config sets what Analyze assumes of the shell that runs the command.
type Config struct {
	// Dir is the working directory a command line starts in; empty means
	// "/root", root's home, where an SSH session of root starts.
	Dir string
	// Home is $HOME and ~; empty means "/root".
	Home string
}

// scope is the shell state a statement sees.
type scope struct {
	vars     map[string]value
	pos      []Word // positional parameters
	posKnown bool
	arg0     string
	dir      string
	homeDir  string
	funcs    map[string]bool
}

func newScope(cfg Config) *scope {
	if cfg.Dir == "" {
		cfg.Dir = "/root"
	}
	if cfg.Home == "" {
		cfg.Home = "/root"
	}
	return &scope{
		vars:     map[string]value{"HOME": {s: cfg.Home, isSet: true}, "PWD": {s: cfg.Dir, isSet: true}},
		posKnown: true,
		arg0:     "bash",
		dir:      cfg.Dir,
		homeDir:  cfg.Home,
		funcs:    map[string]bool{},
	}
}

func (s *scope) clone() *scope {
	c := *s
	c.vars = maps.Clone(s.vars)
	c.funcs = maps.Clone(s.funcs)
	c.pos = append([]Word(nil), s.pos...)
	return &c
}

func (s *scope) lookup(name string) (value, bool) {
	if name == "PWD" {
		if s.dir == "" {
			return value{kind: Unknown}, true
		}
		return value{s: s.dir, isSet: true}, true
	}
	v, ok := s.vars[name]
	return v, ok
}

func (s *scope) set(name string, v value) { s.vars[name] = v }

func (s *scope) ifsDefault() bool {
	v, ok := s.vars["IFS"]
	return !ok || v.kind == Literal && v.s == " \t\n"
}

// home resolves ~ and ~user.
func (s *scope) home(user string) (string, bool) {
	switch user {
	case "":
		v, ok := s.vars["HOME"]
		if !ok || v.kind != Literal {
			return "", false
		}
		return v.s, true
	}
	if h, ok := debianHomes[user]; ok {
		return h, true
	}
	return "", false
}

// debianHomes are the home directories of Debian's base system users
// (base-passwd): ~bin is /bin, so "rm -rf ~bin" deletes /bin.
var debianHomes = map[string]string{"root": "/root", "daemon": "/usr/sbin", "bin": "/bin", "sys": "/dev", "sync": "/bin",
	"games": "/usr/games", "man": "/var/cache/man", "lp": "/var/spool/lpd", "mail": "/var/mail", "news": "/var/spool/news",
	"uucp": "/var/spool/uucp", "proxy": "/bin", "www-data": "/var/www", "backup": "/var/backups", "list": "/var/list",
	"irc": "/run/ircd", "nobody": "/nonexistent", "_apt": "/nonexistent"}

// mergeFrom makes what a conditional branch changed unknown in s.
func (s *scope) mergeFrom(branch *scope) {
	for k, v := range branch.vars {
		if old, ok := s.vars[k]; !ok || old != v {
			if m, isArr := mergeArrays(old, v); ok && isArr {
				s.vars[k] = m
				continue
			}
			s.vars[k] = value{kind: Unknown, isSet: true, alts: mergeAlts(old, ok, v)}
		}
	}
	if branch.dir != s.dir {
		s.dir = ""
	}
	for f := range branch.funcs {
		s.funcs[f] = true
	}
	if !branch.posKnown || len(branch.pos) != len(s.pos) {
		s.posKnown = false
	}
}

// maxAlts bounds the literal values remembered for one variable.
const maxAlts = 8

// mergeAlts returns the literal values a variable may hold after a branch:
// "" when one side is not a known literal.
func mergeAlts(old value, had bool, v value) string {
	lits := func(x value) []string {
		if x.kind == Literal && x.isSet {
			return []string{x.s}
		}
		if x.alts != "" {
			return strings.Split(x.alts, "\x00")
		}
		return nil
	}
	if !had {
		return ""
	}
	a, b := lits(old), lits(v)
	if a == nil || b == nil {
		return ""
	}
	seen := map[string]bool{}
	var out []string
	for _, x := range append(a, b...) {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	if len(out) > maxAlts {
		return ""
	}
	return strings.Join(out, "\x00")
}

// alternatives returns the literal values a variable may hold.
func (s *scope) alternatives(name string) []string {
	v, ok := s.vars[name]
	if !ok || v.alts == "" {
		return nil
	}
	return strings.Split(v.alts, "\x00")
}
