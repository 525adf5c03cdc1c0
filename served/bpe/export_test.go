package bpe

// TokenBytes exposes a token's raw bytes (not UTF-8-repaired) to the
// benchmarks, which build tiktoken-go's rank table from them.
func TokenBytes(t *Tokenizer, id int) string { return string(t.TokenBytes(id)) }
