module github.com/nightshift-dev/nightshift

go 1.26.0

require (
	github.com/daulet/tokenizers v1.24.0 // indirect
	github.com/dlclark/regexp2 v1.12.0 // indirect
	github.com/google/uuid v1.3.0 // indirect
	github.com/pkoukk/tiktoken-go v0.1.8 // indirect
	github.com/sashabaranov/go-openai v1.43.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
