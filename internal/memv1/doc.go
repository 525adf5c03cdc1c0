// Package memv1 holds, frozen, the conversation memory (memv1/memory) and
// its deterministic distiller (memv1/distill) as they were at commit
// d28eab4, before issue 22 rewrote the history lines. It exists only so
// that benchmarks can run the memory before and after that change side by
// side in one run (memory's BenchmarkReadingPolicies); nothing else may use
// it, and it is never changed except to delete it.
//
// Concurrency: as the packages it copies (a Memory is used by one
// goroutine; a Distiller is immutable).
package memv1
