package shell

import "strings"

// optSpec describes a program's options for peeling: which take an
// argument, which take an optional attached one. Long options may be
// abbreviated to any unique prefix, as GNU getopt_long allows.
type optSpec struct {
	flags    string   // short options without argument
	args     string   // short options with an argument (attached or next word)
	optional string   // short options with an optional attached argument
	long     []string // long options without argument ("--login")
	longArgs []string // long options with an argument
	longOpt  []string // long options with an optional "=value"
	numeric  bool     // "-N" (digits) is an option (nice -10)
	permute  bool     // options may follow operands (GNU getopt)
}

// opt is one parsed option: its canonical name ("-c" or "--command") and
// its argument.
type opt struct {
	name string
	val  Word
}

// parseOpts splits args into options and the rest: everything from the first
// operand on (or, with permute, the operands alone). bad is set, naming the
// option, when an option is unknown or not literal: the caller cannot tell
// where the wrapped command starts and must not guess.
func (s optSpec) parse(args []Word) (opts []opt, rest []Word, bad string) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w.Kind == Unknown && (i == 0 || strings.HasPrefix(w.Value, "-")) {
			if !s.permute || strings.HasPrefix(w.Value, "-") {
				return opts, args[i:], w.Value
			}
		}
		v := w.Value
		if v == "--" {
			return opts, append(rest, args[i+1:]...), ""
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			if !s.permute {
				return opts, args[i:], ""
			}
			rest = append(rest, w)
			continue
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v, "=")
			full, kind := s.resolveLong(name)
			switch kind {
			case 0:
				return opts, args[i:], v
			case 1:
				opts = append(opts, opt{name: full})
			case 2:
				if hasVal {
					opts = append(opts, opt{name: full, val: Word{Kind: w.Kind, Value: val}})
				} else if i+1 < len(args) {
					i++
					opts = append(opts, opt{name: full, val: args[i]})
				} else {
					opts = append(opts, opt{name: full})
				}
			case 3:
				opts = append(opts, opt{name: full, val: Word{Kind: w.Kind, Value: val}})
			}
			continue
		}
		if s.numeric && isInteger(v[1:]) {
			opts = append(opts, opt{name: v})
			continue
		}
		for j := 1; j < len(v); j++ {
			c := v[j]
			switch {
			case strings.IndexByte(s.args, c) >= 0:
				if j+1 < len(v) {
					opts = append(opts, opt{name: "-" + string(c), val: Word{Kind: w.Kind, Value: v[j+1:]}})
				} else if i+1 < len(args) {
					i++
					opts = append(opts, opt{name: "-" + string(c), val: args[i]})
				} else {
					opts = append(opts, opt{name: "-" + string(c)})
				}
				j = len(v)
			case strings.IndexByte(s.optional, c) >= 0:
				opts = append(opts, opt{name: "-" + string(c), val: Word{Kind: w.Kind, Value: v[j+1:]}})
				j = len(v)
			case strings.IndexByte(s.flags, c) >= 0:
				opts = append(opts, opt{name: "-" + string(c)})
			default:
				return opts, args[i:], v
			}
		}
	}
	return opts, rest, ""
}

// resolveLong finds a long option by exact name or unique prefix: kind 1
// flag, 2 with argument, 3 with optional argument, 0 unknown or ambiguous.
func (s optSpec) resolveLong(name string) (string, int) {
	var hits []string
	var kinds []int
	for k, list := range [][]string{s.long, s.longArgs, s.longOpt} {
		for _, l := range list {
			if l == name {
				return l, k + 1
			}
			if strings.HasPrefix(l, name) {
				hits, kinds = append(hits, l), append(kinds, k+1)
			}
		}
	}
	if len(hits) == 1 {
		return hits[0], kinds[0]
	}
	return "", 0
}

// ResolveLong resolves a GNU long option (with or without "=value") against
// the given names by exact match or unique prefix; ok is false when it
// matches none or several.
func ResolveLong(option string, names []string) (full string, ok bool) {
	name, _, _ := strings.Cut(option, "=")
	full, kind := optSpec{long: names}.resolveLong(name)
	return full, kind != 0
}

func has(opts []opt, names ...string) (Word, bool) {
	for _, o := range opts {
		for _, n := range names {
			if o.name == n {
				return o.val, true
			}
		}
	}
	return Word{}, false
}

// Options describes a program's options for ParseOptions. Long options may
// be abbreviated to any unique prefix, as GNU getopt_long allows.
type Options struct {
	Flags    string   // short options without argument
	Args     string   // short options with an argument
	Optional string   // short options with an optional attached argument
	Long     []string // long options without argument, with their "--"
	LongArgs []string // long options with an argument
	LongOpt  []string // long options with an optional "=value"
	Permute  bool     // options may follow operands (GNU getopt's default)
}

// Option is one parsed option: its full name ("-R", "--recursive") and
// argument.
type Option struct {
	Name  string
	Value Word
}

// Parse splits args into options and operands; a "--" ends the options
// and is dropped. An unknown option is kept as an Option with no value and
// reported in unknown.
func (o Options) Parse(args []Word) (opts []Option, operands []Word, unknown []string) {
	s := optSpec{flags: o.Flags, args: o.Args, optional: o.Optional, long: o.Long, longArgs: o.LongArgs, longOpt: o.LongOpt}
	for i := 0; i < len(args); {
		w := args[i]
		if w.Value == "--" {
			return opts, append(operands, args[i+1:]...), unknown
		}
		if !strings.HasPrefix(w.Value, "-") || w.Value == "-" || w.Kind == Unknown {
			if !o.Permute {
				return opts, append(operands, args[i:]...), unknown
			}
			operands = append(operands, w)
			i++
			continue
		}
		// One option word (and the argument it takes from the next word).
		end := i + 1
		if s.takesNext(w.Value) && i+1 < len(args) {
			end = i + 2
		}
		window := args[i:end]
		got, rest, bad := s.parse(window)
		for _, g := range got {
			opts = append(opts, Option{Name: g.name, Value: g.val})
		}
		consumed := len(window) - len(rest)
		if bad != "" && len(rest) > 0 && rest[0].Value == bad {
			unknown = append(unknown, bad)
			opts = append(opts, Option{Name: bad})
			consumed++
		}
		if consumed == 0 {
			consumed = 1
		}
		i += consumed
	}
	return opts, operands, unknown
}

// Has returns the value of the first option named one of names.
func Has(opts []Option, names ...string) (Word, bool) {
	for _, o := range opts {
		for _, n := range names {
			if o.Name == n {
				return o.Value, true
			}
		}
	}
	return Word{}, false
}

// takesNext reports whether an option word takes the next word as its
// argument ("-m" with m in args, "-Rm", "--mode" without "=").
func (s optSpec) takesNext(v string) bool {
	if strings.HasPrefix(v, "--") {
		name, _, hasVal := strings.Cut(v, "=")
		_, kind := s.resolveLong(name)
		return kind == 2 && !hasVal
	}
	for j := 1; j < len(v); j++ {
		c := v[j]
		switch {
		case strings.IndexByte(s.args, c) >= 0:
			return j == len(v)-1
		case strings.IndexByte(s.optional, c) >= 0:
			return false
		case strings.IndexByte(s.flags, c) < 0:
			return false
		}
	}
	return false
}
