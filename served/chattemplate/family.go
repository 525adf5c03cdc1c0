package chattemplate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Family is a chat template this package renders natively.
type Family int

// The supported families. The zero Family is invalid.
const (
	// Qwen25 is the chat template of the Qwen2.5 Instruct models.
	Qwen25 Family = iota + 1
	// Qwen3 is the chat template of the Qwen3 (hybrid thinking) models.
	Qwen3
)

// String returns "qwen2.5" or "qwen3".
func (f Family) String() string {
	switch f {
	case Qwen25:
		return "qwen2.5"
	case Qwen3:
		return "qwen3"
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// knownTemplates maps the sha256 of a chat_template, byte for byte, to the
// family whose renderer reproduces it. Only templates whose renders were
// checked against Jinja2 (testdata/chat) are listed: a template that differs
// by a single byte may render differently and is refused.
var knownTemplates = map[string]Family{
	// served/models/qwen2.5/tokenizer_config.json (Qwen2.5 Instruct).
	"cd8e9439f0570856fd70470bf8889ebd8b5d1107207f67a5efb46e342330527f": Qwen25,
	// served/models/qwen3/tokenizer_config.json (Qwen3).
	"87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5": Qwen3,
}

// Detect recognises a chat template (the chat_template field of a model's
// tokenizer_config.json). It matches the template exactly; any other template
// gives an error wrapping ErrUnknownTemplate that names the first 12 hex
// digits of the template's sha256.
func Detect(chatTemplate string) (Family, error) {
	sum := sha256.Sum256([]byte(chatTemplate))
	h := hex.EncodeToString(sum[:])
	if f, ok := knownTemplates[h]; ok {
		return f, nil
	}
	return 0, fmt.Errorf("chat template sha256:%s: %w", h[:12], ErrUnknownTemplate)
}
