// Package chattemplate renders chat prompts for the Qwen2.5 and Qwen3 chat
// templates natively in Go, byte for byte as vLLM renders them, so that a
// prompt can be counted exactly and locally before it is sent.
//
// # Contract
//
// Render(f, messages, tools, opt).Text is the string vLLM's OpenAI-compatible
// server tokenizes (with add_special_tokens=False) for a chat completion
// request carrying messages and tools, when the model's tokenizer_config.json
// has the chat_template Detect recognised as f. "As vLLM renders" means the
// whole path a go-openai request takes:
//
//   - go-openai's JSON encoding: empty strings are absent fields, invalid
//     UTF-8 arrives as U+FFFD, map-typed tool parameters arrive with sorted
//     keys and float64 values in Go's notation (1.0 arrives as 1);
//   - vLLM's request parsing (vllm/entrypoints/chat_utils.py,
//     parse_chat_messages with the "string" content format): absent content
//     is "", text parts are joined with "\n", reasoning_content is dropped,
//     any role is accepted, each assistant tool call's arguments string is
//     json.loads-ed (a string that is not valid JSON becomes {});
//   - tools as [tool.model_dump() for tool in request.tools]: "description"
//     and "parameters" are null when absent, "strict" appears only when true;
//   - transformers' Jinja2 environment (trim_blocks, lstrip_blocks, a tojson
//     filter that is json.dumps(x, ensure_ascii=False)) with
//     add_generation_prompt and chat_template_kwargs.enable_thinking taken
//     from Options.
//
// The reference is vLLM's main branch of 2025 (chat_utils.py where
// _postprocess_messages maps invalid arguments to {}; older releases answered
// 400 instead — Options.Strict gives that behaviour) and transformers 4.5x.
// The golden files in testdata/chat, made by scripts/render-chat.py with
// Python's Jinja2 and counted by scripts/count-chat.js with the HF tokenizers,
// are the proof: every conversation there renders identically.
//
// Requests vLLM would refuse give a *FieldError naming the field
// ("messages[3].tool_calls[0].function.arguments: …"), matching
// ErrInvalidRequest. PythonJSON exposes the json.dumps(json.loads(s))
// re-serialisation the templates apply to tool call arguments.
//
// # Concurrency
//
// The package has no mutable state: Detect, Render and PythonJSON may be
// called from any number of goroutines. Render does not modify or retain its
// arguments.
package chattemplate
