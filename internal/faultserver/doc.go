// Package faultserver is an OpenAI/vLLM-compatible model server on
// 127.0.0.1 that answers chat completions with the faults a model server, or
// a proxy in front of it, produces at night: a huge body, an HTML page with
// status 200, JSON of the wrong shape, a truncated body, a connection
// accepted and never answered, a body dripped a byte at a time, and an empty
// choices list. After the scripted faults it answers normally, so a test
// sees each retry and the recovery.
//
// # Contract
//
// Every answer that is not a fault, and every other endpoint (GET
// /v1/models, POST /tokenize, …), is the Next handler's: tests give it a
// vllmsim.Server's handler, so a normal answer is vLLM's. The faults that
// need a real completion (Truncated, WrongShape, EmptyChoices, Drip) are
// made from Next's answer to the same request: Truncated is its first half,
// WrongShape has "choices" as an object, EmptyChoices has "choices": [].
// Faults are consumed in order, one per POST /v1/chat/completions;
// Config.Faults lists them with how many consecutive requests each one
// affects.
//
// Nothing runs unbounded: a Huge body is HugeBytes long and written in
// chunks until the client stops reading; a Drip writes one byte of a
// finite body per DripEvery; Hang waits for the client to give up or for
// Close. Close ends every pending answer at once and stops the listener.
//
// # Concurrency
//
// A Server serves any number of requests at once; the fault queue and the
// counts are guarded by one mutex, so concurrent requests each take the next
// fault. Close is idempotent and safe to call concurrently with requests.
package faultserver
