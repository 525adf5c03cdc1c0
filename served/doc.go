// Package served is one model served by an OpenAI-compatible server (vLLM):
// its name, its tokenizer and chat template, the budget of its context
// window and the server's own counting, as one value.
//
// Connect loads the tokenizer (a built-in, "qwen3" or "qwen2.5", embedded
// and sha256-pinned, or any HuggingFace tokenizer.json with its
// tokenizer_config.json), asks the server for its model (GET /v1/models,
// retried for Config.Wait while the server is unreachable, busy or silent)
// and sizes the budget to the model's max_model_len unless the Config gives
// a window. Offline builds the same Model from a tokenizer alone, with no
// server: for tests, demos and counting tools. Every Config field's zero
// value is a documented default.
//
// A Model counts a chat prompt exactly as vLLM does (Count, Chat): it
// renders messages and tools with the model's chat template natively
// (package served/chattemplate, byte-identical to vLLM's Jinja2 render) and
// tokenizes the render without special tokens (package served/bpe, whose
// IDs are HuggingFace tokenizers'; or, in builds with the hf_native tag,
// that library itself: Backend). Counting is incremental: re-counting a
// conversation after one new message tokenizes only what is new. A Model is
// what package budget assesses (a budget.Counter), and what package memory
// and package worker take.
//
// Verify compares a prompt's local count with the server's POST /tokenize;
// a *CountMismatchError says the tokenizer or template is not the served
// model's. CheckFirstCount puts that check in front of the first model call
// of a run. ParseContextLength reads vLLM's context-length rejections (both
// JSON error shapes, every message form vLLM has used) from the server's
// typed answer as go-openai reports it (ServerError), never from the text
// of other errors.
//
// Errors are typed or sentinel: ErrUnknownTokenizer, ErrBackendNotBuilt,
// ErrNoChatTemplate, ErrNoModel, ErrNoWindow, ErrOffline, *HTTPError,
// *UnreachableError, *CountMismatchError, *ContextLengthError; budget
// errors wrap budget.ErrConfig.
//
// Concurrency: a Model is immutable and safe for concurrent use, and so are
// its ChatCounter and tokenizers; a CountCheck serialises its one check.
// The package's one piece of state is not mutable: each built-in tokenizer
// is loaded with the pure-Go backend at most once per process
// (sync.OnceValues) and that immutable tokenizer is shared by every Model
// (and LoadTokenizer) that names it, which saves the decompression,
// checksum and parse of every later load.
package served
