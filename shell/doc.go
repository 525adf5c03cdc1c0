// Package shell analyses a bash command line statically, the way bash would
// run it, without running anything. It is the one shell parser of the
// module: the safety check (package safety) and the distiller (package
// distill) both read commands through it.
//
// Parse reads a command with mvdan.cc/sh/v3/syntax in the bash dialect,
// after refusing what that parser and bash could read differently: control
// characters other than tab and newline (bash reads a carriage return,
// vertical tab or form feed as part of a word; the parser as a blank, so
// "true\r#; rm -rf /" would hide the rm), NUL bytes and invalid UTF-8.
//
// Analyze walks the parsed command and returns every simple command that may
// run, in source order, each with its words expanded as far as they can be
// known before running: quotes removed, ANSI-C strings decoded, brace
// expansion done, ~ and ~user resolved, variables assigned earlier in the
// command line (literal values only) and loop variables over literal lists
// substituted, positional parameters of a literal `sh -c SCRIPT NAME ARG…`
// bound, the working directory tracked through cd, and wrappers (sudo, env,
// timeout, xargs, find -exec, su -c, bash -c, …) peeled so that the program
// they run is reported too, after the wrapper itself. Commands inside
// command and process substitutions, here-documents, functions, traps and
// literal scripts handed to a shell are analysed too. A word that cannot be
// known (a command substitution, an unknown variable, runtime data) is
// reported as Unknown; a word with unquoted glob characters as a Pattern.
//
// What cannot be resolved statically and could change which program runs
// is reported as a Problem (a program name produced by an expansion, a
// shell reading its script from a pipe, eval of non-literal text, a script
// run by the same command line that wrote it, …). Analyze never guesses:
// a caller that must be safe refuses a command with any Problem.
//
// Limits: input over MaxLen bytes, nesting deeper than MaxDepth and more
// than maxCommands simple commands are reported as problems, so analysis
// time is linear in the input. Analyze is a pure function: safe for
// concurrent use, it reads no file and runs nothing.
package shell
