//go:build !race

package testenv

// Race reports whether the test binary was built with -race. A pure-compute
// test over a big input set checks a deterministic sample of it when Race is
// true, and the whole set otherwise; `make test` runs such tests both ways
// (the Makefile's FULL list runs without -race), so the whole set is checked
// on every run and the race detector still watches the code.
const Race = false
