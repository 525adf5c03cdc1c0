// Package progress shows how a batch of rules × hosts is going, on a
// terminal or in a log.
//
// The batch reports through Progress's methods — Plan (a host's rule
// count), RuleStarted, RuleEnded, HostDown — and each host's worker through
// Observer(host), a nightshift.Observer that follows the current attempt and the
// prompt's size. A batch declares the few methods it calls as an interface of
// its own.
//
// On a terminal (Config.Mode Auto asks golang.org/x/term; Live forces it)
// a status block is redrawn in place with ANSI escape sequences: a summary
// line (rules done of total, elapsed time, ETA, how many were fixed or
// compliant and how many not, hosts down) and one line per host (rules done
// of its total, the current rule, attempt, time on it and prompt size),
// running hosts first, at most Config.HostLines of them, each line cut to the
// terminal's width. Worker events redraw at most once per Config.Interval;
// Tick (or Run, which ticks on a timer) redraws so the clocks move. Otherwise
// (Plain, or Out not a terminal) one line is written per event:
//
//	[00:00:12] web-1 sshd_disable_root_login: fixed after 1 attempt in 12s (1/7 rules, ETA 48s)
//
// The ETA extrapolates the batch's own rate (rules done per elapsed time,
// hosts working in parallel) over the rules left, not counting hosts that are
// down. All times come from Config.Now.
//
// Concurrency: every method is safe for concurrent use; each update is
// written whole under one lock. The first write error stops the output and is
// returned by Err and Close. Nothing panics on odd input (unknown hosts are
// added on first sight, negative counts ignored).
package progress
