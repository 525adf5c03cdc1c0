package served

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/nightshift-dev/nightshift/internal/readfile"
	"github.com/nightshift-dev/nightshift/served/bpe"
)

//go:embed models/qwen3/tokenizer.json.gz models/qwen3/tokenizer_config.json
//go:embed models/qwen2.5/tokenizer.json.gz models/qwen2.5/tokenizer_config.json
var modelFS embed.FS

// builtin describes one embedded tokenizer and the sha256 of its uncompressed
// files (see models/PROVENANCE.md).
type builtin struct {
	dir             string
	tokenizerSHA256 string
	configSHA256    string
	// goFiles loads the built-in with the pure-Go backend the first time it
	// is called and returns those files (or error) ever after: the files are
	// embedded and a *bpe.Tokenizer is immutable and safe for concurrent
	// use, so one decompression, verification and parse (about 150 ms for
	// qwen3) serves every load of the process. Set by init.
	goFiles func() (*files, error)
}

func init() {
	for name, b := range builtins {
		b.goFiles = sync.OnceValues(func() (*files, error) { return loadBuiltin(name, *b, BackendGo) })
	}
}

var builtins = map[string]*builtin{
	"qwen3": {
		dir:             "models/qwen3",
		tokenizerSHA256: "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4",
		configSHA256:    "5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63",
	},
	"qwen2.5": {
		dir:             "models/qwen2.5",
		tokenizerSHA256: "c0382117ea329cdf097041132f6d735924b697924d6f6fc3945713e96ce87539",
		configSHA256:    "5b5d4f65d0acd3b2d56a35b56d374a36cbc1c8fa5cf3b3febbbfabf22f359583",
	},
}

// ErrUnknownTokenizer is returned for a tokenizer name that is neither a
// built-in nor an existing file.
var ErrUnknownTokenizer = errors.New("unknown tokenizer")

// Builtins returns the names of the embedded tokenizers, sorted.
func Builtins() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// maxConfigSize bounds a tokenizer_config.json (chat templates are a few
// tens of KB; the file with its added tokens rarely more than 1 MB).
const maxConfigSize = 16 << 20

// files is a loaded tokenizer together with the chat template that goes
// with it (empty when the tokenizer came without a tokenizer_config.json).
type files struct {
	// Name is the built-in name ("qwen3") or the path the files were loaded from.
	Name string
	// Tokenizer is the model's tokenizer, built by Backend: a *bpe.Tokenizer
	// for BackendGo, a *Native for BackendNative.
	Tokenizer Tokenizer
	// Backend is the implementation behind Tokenizer.
	Backend Backend
	// ChatTemplate is the Jinja2 chat template from tokenizer_config.json.
	ChatTemplate string
}

// close releases what the tokenizer holds outside Go's heap (the native
// backend's Rust tokenizer); for the pure-Go backend it does nothing.
func (m *files) close() error {
	if c, ok := m.Tokenizer.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// LoadTokenizer loads a tokenizer alone, for counting plain text: a
// built-in or a tokenizer.json, as Config.Tokenizer names it (whether or
// not a chat template comes with it). A tokenizer of BackendNative holds
// memory outside Go's heap: it is an io.Closer, to be closed after use.
func LoadTokenizer(spec string, backend Backend) (Tokenizer, error) {
	f, err := loadFiles(spec, backend)
	if err != nil {
		return nil, err
	}
	return f.Tokenizer, nil
}

// loadFiles loads a tokenizer by built-in name ("qwen3", "qwen2.5") or
// from a file: a tokenizer.json, or a directory holding tokenizer.json (and,
// for chat counting, tokenizer_config.json). For a file, a
// tokenizer_config.json beside it is read when present. Built-in files are
// verified against their pinned sha256 before use. A built-in with
// BackendGo is loaded once per process and its tokenizer shared by every
// caller (it is immutable); each call still returns files of its own.
// backend chooses the implementation; one this binary was built without is refused with an
// error wrapping ErrBackendNotBuilt before anything is read.
func loadFiles(spec string, backend Backend) (*files, error) {
	if err := backend.check(); err != nil {
		return nil, err
	}
	if b, ok := builtins[strings.ToLower(spec)]; ok {
		if backend != BackendGo {
			return loadBuiltin(strings.ToLower(spec), *b, backend) // each caller owns (and closes) its native tokenizer
		}
		f, err := b.goFiles()
		if err != nil {
			return nil, err
		}
		c := *f // the caller's own files; the immutable tokenizer is shared
		return &c, nil
	}
	st, err := os.Stat(spec)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w %q: not a built-in (%s) and no such file", ErrUnknownTokenizer, spec, strings.Join(Builtins(), ", "))
		}
		return nil, fmt.Errorf("load tokenizer %q: %w", spec, err)
	}
	path, dir := spec, filepath.Dir(spec)
	if st.IsDir() {
		path, dir = filepath.Join(spec, "tokenizer.json"), spec
	}
	tok, err := loadFile(path, backend)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %q: %w", path, err)
	}
	m := &files{Name: spec, Tokenizer: tok, Backend: backend}
	if data, err := readfile.Read(filepath.Join(dir, "tokenizer_config.json"), maxConfigSize); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("load tokenizer config: %w", err)
	} else if err == nil {
		tmpl, err := chatTemplateOf(data)
		if err != nil {
			return nil, fmt.Errorf("load tokenizer config %q: %w", filepath.Join(dir, "tokenizer_config.json"), err)
		}
		m.ChatTemplate = tmpl
	}
	return m, nil
}

// loadFile loads the tokenizer.json at path with backend.
func loadFile(path string, backend Backend) (Tokenizer, error) {
	if backend == BackendGo {
		return bpe.LoadFile(path)
	}
	data, err := readfile.Read(path, bpe.MaxFileSize)
	if err != nil {
		return nil, err
	}
	return newNativeTokenizer(data, path)
}

func loadBuiltin(name string, b builtin, backend Backend) (*files, error) {
	gz, err := modelFS.ReadFile(b.dir + "/tokenizer.json.gz")
	if err != nil {
		return nil, fmt.Errorf("built-in tokenizer %s: %w", name, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("built-in tokenizer %s: %w", name, err)
	}
	h := sha256.New()
	raw, err := io.ReadAll(io.TeeReader(zr, h))
	if err != nil {
		return nil, fmt.Errorf("built-in tokenizer %s: decompress: %w", name, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != b.tokenizerSHA256 {
		return nil, fmt.Errorf("built-in tokenizer %s: tokenizer.json sha256 %s, want %s", name, got, b.tokenizerSHA256)
	}
	cfg, err := modelFS.ReadFile(b.dir + "/tokenizer_config.json")
	if err != nil {
		return nil, fmt.Errorf("built-in tokenizer %s: %w", name, err)
	}
	if got := sha256.Sum256(cfg); hex.EncodeToString(got[:]) != b.configSHA256 {
		return nil, fmt.Errorf("built-in tokenizer %s: tokenizer_config.json sha256 %x, want %s", name, got, b.configSHA256)
	}
	tmpl, err := chatTemplateOf(cfg)
	if err != nil {
		return nil, fmt.Errorf("built-in tokenizer %s: %w", name, err)
	}
	var tok Tokenizer
	if backend == BackendGo {
		tok, err = bpe.Load(bytes.NewReader(raw))
	} else {
		tok, err = newNativeTokenizer(raw, "built-in "+name)
	}
	if err != nil {
		return nil, fmt.Errorf("built-in tokenizer %s: %w", name, err)
	}
	return &files{Name: name, Tokenizer: tok, Backend: backend, ChatTemplate: tmpl}, nil
}

// chatTemplateOf extracts chat_template from a tokenizer_config.json. The
// field is either a string or a list of {name, template} objects, of which
// the one named "default" is used (as transformers does).
func chatTemplateOf(data []byte) (string, error) {
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("parse tokenizer_config.json: %w", err)
	}
	if len(cfg.ChatTemplate) == 0 || string(cfg.ChatTemplate) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(cfg.ChatTemplate, &s); err == nil {
		return s, nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(cfg.ChatTemplate, &named); err != nil {
		return "", fmt.Errorf("tokenizer_config.json: chat_template is neither a string nor a list of named templates")
	}
	for _, n := range named {
		if n.Name == "default" {
			return n.Template, nil
		}
	}
	return "", fmt.Errorf("tokenizer_config.json: chat_template has no template named \"default\"")
}
