package served

// Tokenizer turns text into the model's token IDs exactly as the model's
// HuggingFace tokenizer does with add_special_tokens=false: added and special
// token strings that appear in the text are recognised as those tokens, and no
// BOS/EOS is added. Implementations must be safe for concurrent use.
type Tokenizer interface {
	// Encode returns the token IDs of text.
	Encode(text string) []int
	// Count returns len(Encode(text)), ideally without building the slice.
	Count(text string) int
}
