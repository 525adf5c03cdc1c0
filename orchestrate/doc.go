// Package orchestrate is the one way Nightshift runs rules on hosts: the
// rule loop of a host, the report of a night, and the SSH connector of
// inventory hosts. Its two engines record what the loop does: package batch
// in the SQLite journal (`worker run`, `worker resume`, and the main mode's
// one host) and package fleet in Temporal workflows (`worker fleet`).
//
// # The loop and its engines
//
// Work works on a host's rules one at a time, in order, each through the
// attempt loop (package worker's Fix). An Engine is what differs between
// the two: where a task begins and ends (Begin, Finish), how the rule's
// check runs (Check), what the host's transport errors were (HostErr),
// whether the night was asked to stop (Stopped) and its own failures (Err).
// The engine also gives the worker its model, target, probe and observer,
// which record each step before the worker goes on (the journal) or run
// it as an activity (Temporal). In the manner of litestream's
// ReplicaClient, the engine holds no policy: Work decides, for both, that
// a rule whose Fix failed on a transport error of the host ends the host
// (that task and every later one unreachable, after Engine.HostDown), that
// the model server staying down stops the night (HostEnd.ModelDown, which
// wraps nightshift.ErrModelUnreachable), and that a stop leaves the task it
// cut short unfinished for a resume.
//
// # Reports
//
// Report builds a report.Run from a Grid: a night's rules and hosts in
// order and the tasks that started, whichever engine recorded them (the
// journal's steps rebuilt into Tasks, or a fleet's host results). The
// same inputs give the same report through either engine. CommandEntry is
// a command as a report shows it, its output cut around the marker of
// package textcut.
//
// # Concurrency
//
// Work runs on one goroutine (a host's, or its workflow's) and calls its
// Engine from it; Report and the Task methods are not safe for concurrent
// use on one value; SSHConnector is safe for concurrent use.
package orchestrate
