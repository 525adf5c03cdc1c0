// Package ssgfix reads SSG's own bash remediations the way a user of SSG
// gets them (`oscap xccdf generate fix --fix-type bash`), for tests: the
// corpus of real fixes that safety's and sandbox's tests judge, and the
// end-to-end tests that apply SSG's fix to compare with the worker's.
// Nothing outside tests uses it; it is internal so the public API stays
// what programs use.
//
// Its functions are pure or safe for concurrent use when the Runner is; it
// has no package state.
package ssgfix
