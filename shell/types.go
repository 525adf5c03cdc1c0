package shell

import (
	"path"
	"strings"
)

// WordKind says how much is known of a word before the command runs.
type WordKind uint8

const (
	// Literal: the word's value is known exactly.
	Literal WordKind = iota
	// Pattern: the word has unquoted glob characters; bash replaces it by
	// the matching paths (or keeps it as is when nothing matches). Glob
	// holds the pattern.
	Pattern
	// Unknown: the value depends on something known only when the command
	// runs (a command substitution, an unknown variable, input). It may
	// stand for zero or more words.
	Unknown
)

// Word is one word of a simple command after expansion.
type Word struct {
	Kind WordKind
	// Value is the word with quotes removed; for an Unknown word, the
	// known parts with the unknown ones as written ("/$dir").
	Value string
	// Glob is, for a Pattern, the pattern in path.Match syntax (quoted
	// metacharacters escaped with a backslash).
	Glob string
	// Expanded is set when the word came from a parameter, arithmetic or
	// command expansion, brace expansion or tilde expansion, even if its
	// value is known.
	Expanded bool
}

// Lit returns a literal word.
func Lit(s string) Word { return Word{Value: s} }

// IsLiteral reports whether w is known exactly.
func (w Word) IsLiteral() bool { return w.Kind == Literal }

// Input says where a command's standard input comes from.
type Input uint8

const (
	// StdinInherited: the standard input of the whole command line (over
	// SSH, the session's).
	StdinInherited Input = iota
	// StdinPipe: the output of another command.
	StdinPipe
	// StdinHeredoc: a here-document.
	StdinHeredoc
	// StdinHereString: a here-string (<<<).
	StdinHereString
	// StdinFile: a file redirected with <.
	StdinFile
)

func (i Input) String() string {
	return [...]string{"inherited", "pipe", "here-document", "here-string", "file"}[i]
}

// Redir is one redirection that applies to a command (its own, or one of
// an enclosing group, subshell, loop or wrapper).
type Redir struct {
	Op     string // ">", ">>", ">|", "&>", "&>>", "<>", "<", ">&", "<&", "<<", "<<-", "<<<"
	Target Word   // the file (or fd, for >& and <&); the body for here-documents
	// Write is set when the target file is opened for writing.
	Write bool
}

// Command is one simple command that may run.
type Command struct {
	// Args are the expanded words; Args[0] is the program or builtin.
	Args []Word
	// Redirs are the redirections in effect, innermost first.
	Redirs []Redir
	// Dir is the working directory when known (commands start in Config.Dir),
	// "" when a cd made it unknown.
	Dir string
	// Stdin says where standard input comes from; StdinText is its content
	// when it is known (a literal here-document or here-string, or the
	// output of echo/printf of literal words).
	Stdin      Input
	StdinText  string
	StdinKnown bool
	// Via are the wrappers peeled to reach this command, outermost first
	// ("sudo", "timeout", "find -exec", "bash -c").
	Via []string
	// Function is set when Args[0] names a function defined in the
	// command line (bash runs the function, not a program).
	Function bool
}

// Name returns the base name of the program ("rm" for /usr/bin/rm), "" when
// the program is not a literal word.
func (c *Command) Name() string {
	if len(c.Args) == 0 || c.Args[0].Kind != Literal {
		return ""
	}
	return path.Base(c.Args[0].Value)
}

// String returns the command in normal form: the words with quotes
// removed, separated by single spaces, the program as written.
func (c *Command) String() string {
	parts := make([]string, len(c.Args))
	for i, w := range c.Args {
		parts[i] = w.Value
	}
	return strings.Join(parts, " ")
}

// Problem is a construct that cannot be analysed statically and could run
// something the analysis does not see.
type Problem struct {
	// Construct is the offending text, as written or in normal form.
	Construct string
	// Reason says why it cannot be analysed.
	Reason string
	// Hint tells what to write instead.
	Hint string
}

// Analysis is what Analyze found in a command line.
type Analysis struct {
	// Commands are the simple commands that may run, in source order, a
	// wrapper before what it runs.
	Commands []*Command
	// Writes are the files redirections open for writing, wherever they
	// stand (a group's, a subshell's, exec's).
	Writes []Word
	// Problems are the constructs that could not be analysed.
	Problems []Problem

	forkers []string
}

// SelfForking returns a function definition that calls itself in a pipe or
// in the background (a fork bomb), if the command line has one.
func (an *Analysis) SelfForking() (string, bool) {
	if len(an.forkers) == 0 {
		return "", false
	}
	return an.forkers[0], true
}
