// Package budget measures prompts exactly as vLLM does and keeps them inside
// the model's context window.
//
// It has three parts:
//
//   - Tokenizers. Tokenizer is the interface every counter uses. LoadModel
//     loads a built-in model ("qwen3", "qwen2.5", embedded, sha256-pinned)
//     or any HuggingFace tokenizer.json with the pure-Go byte-level BPE of
//     package budget/bpe, whose token IDs are identical to HF tokenizers'.
//     LoadModelWith chooses the Backend: built with the hf_native tag,
//     BackendNative loads the same files with github.com/daulet/tokenizers
//     (Native) behind the same interface; without the tag it is refused with
//     ErrBackendNotBuilt.
//   - Chat counting. ChatCounter renders messages and tools with the model's
//     chat template the way vLLM does (package budget/chattemplate) and counts
//     the render; per-piece counts are cached so re-counting a conversation
//     after one new message tokenizes only what is new.
//   - Budgets. Budget holds the context window, the completion reserve
//     (max_tokens), the soft limit where compression starts and a safety
//     margin; Assess breaks a prompt down into system, history, current turn
//     and reserve. VLLMClient reads max_model_len from GET /v1/models and
//     counts through POST /tokenize; VerifyChat compares a prompt's local
//     count with the live server's (the worker's --verify-count).
//
// Concurrency: Budget is immutable; ChatCounter, VLLMClient and the
// tokenizers are safe for concurrent use. The package's one piece of state
// is not mutable: each built-in tokenizer is loaded with the pure-Go
// backend at most once per process (sync.OnceValues) and that immutable
// tokenizer is shared by every Model LoadModel returns for it, which saves
// the decompression, checksum and parse of every later load.
package budget
