// Package budget keeps prompts inside a model's context window: Budget holds
// the context window, the completion reserve (max_tokens), the soft limit
// where compression starts and a safety margin; Assess and AssessCount break
// a prompt's count down into system, history, current turn and reserve.
//
// Counting is not done here: a Counter (package served's Model, which
// renders the chat template and tokenizes the render exactly as vLLM does)
// gives the PromptCount a Budget assesses.
//
// Concurrency: Budget and Assessment are immutable and safe for concurrent
// use; Assess is as safe as the Counter it is given.
package budget
