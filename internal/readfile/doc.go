// Package readfile opens and reads the files the worker is given (rules,
// inventories, tokenizers, datastreams) so that no input can hang or
// exhaust it: only regular files are opened — a FIFO, a device such as
// /dev/zero, a socket or a directory is refused by name before anything
// is read (a FIFO is opened non-blocking, so a FIFO without a writer cannot
// hang the open) — and reads stop at a size cap.
//
// The functions are safe for concurrent use; they keep no state.
package readfile
