// Package vllmref counts prompts with the project's independent reference for
// what vLLM tokenizes: scripts/render-chat.py renders a chat request with
// Python's Jinja2 the way vLLM and transformers do, and scripts/count-chat.js
// tokenizes the render with the HuggingFace tokenizers library (the Rust
// crate, as a Node addon). Neither shares code with package served, so a test
// that compares served's counts with a Reference can fail; the golden files
// of served/chattemplate were made by the same two scripts.
//
// A Reference runs each script once, as a long-lived child process fed one
// JSON request per line (`render-chat.py --serve FAMILY`, `count-chat.js
// --serve FAMILY`), so hundreds of prompts take seconds. It implements
// vllmsim.PromptCounter. It is safe for concurrent use: requests are
// answered one at a time.
//
// It needs python3 with jinja2 and node with scripts/node_modules
// (`npm ci --prefix scripts`); scripts/install-test-deps.sh installs both.
// Without them Start returns an error wrapping ErrUnavailable.
package vllmref

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/nightshift-dev/nightshift/vllmsim"
)

// ErrUnavailable is wrapped by Start's error when python3, jinja2, node or
// the tokenizers package is missing.
var ErrUnavailable = errors.New("vllmref: the reference tools are not installed")

// ErrBroken is wrapped by the errors of a Reference whose child processes
// failed or were closed; it answers nothing after that. (A call whose
// context ends returns the context's error and leaves the Reference
// usable.)
var ErrBroken = errors.New("vllmref: the reference processes failed")

// Config configures a Reference.
type Config struct {
	// Family is the model family whose template and tokenizer are used,
	// "qwen3" or "qwen2.5"; "" means "qwen3".
	Family string
	// Root is the repository root (holding scripts/ and served/models/);
	// "" means the nearest directory above the working directory holding
	// go.mod.
	Root string
}

// Reference is the running pair of reference processes.
type Reference struct {
	mu      sync.Mutex
	render  *child
	count   *child
	broken  error
	prompts int
	texts   int
}

// Start checks the tools and starts both processes.
func Start(ctx context.Context, cfg Config) (*Reference, error) {
	if cfg.Family == "" {
		cfg.Family = "qwen3"
	}
	if cfg.Family != "qwen3" && cfg.Family != "qwen2.5" {
		return nil, fmt.Errorf("vllmref: unknown family %q (want qwen3 or qwen2.5)", cfg.Family)
	}
	root := cfg.Root
	if root == "" {
		var err error
		if root, err = moduleRoot(); err != nil {
			return nil, err
		}
	}
	if err := checkTools(ctx, root); err != nil {
		return nil, err
	}
	r := &Reference{}
	var err error
	if r.render, err = startChild(root, "python3", filepath.Join(root, "scripts", "render-chat.py"), "--serve", cfg.Family); err != nil {
		return nil, err
	}
	if r.count, err = startChild(root, "node", filepath.Join(root, "scripts", "count-chat.js"), "--serve", cfg.Family); err != nil {
		r.render.stop()
		return nil, err
	}
	// One round trip proves both processes answer.
	if _, err := r.EncodeChatRequest(ctx, []byte(`{"messages":[{"role":"user","content":"hi"}]}`), true); err != nil {
		r.Close()
		return nil, fmt.Errorf("vllmref: first request: %w", err)
	}
	r.prompts = 0
	return r, nil
}

// moduleRoot walks up from the working directory to go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("vllmref: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("vllmref: no go.mod above the working directory")
		}
		dir = parent
	}
}

// checkTools reports what is missing, wrapping ErrUnavailable.
func checkTools(ctx context.Context, root string) error {
	var missing []string
	if _, err := exec.LookPath("python3"); err != nil {
		missing = append(missing, "python3")
	} else if out, err := exec.CommandContext(ctx, "python3", "-c", "import jinja2").CombinedOutput(); err != nil {
		missing = append(missing, fmt.Sprintf("jinja2 for python3 (%s)", bytes.TrimSpace(out)))
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing = append(missing, "node")
	}
	if _, err := os.Stat(filepath.Join(root, "scripts", "node_modules", "@anush008", "tokenizers", "package.json")); err != nil {
		missing = append(missing, "scripts/node_modules (npm ci --prefix scripts)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing %q (scripts/install-test-deps.sh installs them)", ErrUnavailable, missing)
	}
	return nil
}

// Prompts returns how many chat requests the reference has rendered and
// counted since Start.
func (r *Reference) Prompts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.prompts
}

// Texts returns how many plain texts the reference has tokenized (the
// renders of chat requests not included).
func (r *Reference) Texts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.texts
}

// EncodeChatRequest renders body (a chat completion or /tokenize request as
// sent on the wire) with render-chat.py and tokenizes the render with
// count-chat.js. A request the template refuses is an error wrapping
// vllmsim.ErrTemplate.
func (r *Reference) EncodeChatRequest(ctx context.Context, body []byte, addGenerationPrompt bool) ([]int, error) {
	if !json.Valid(body) {
		return nil, fmt.Errorf("%w: the request body is not JSON", vllmsim.ErrTemplate)
	}
	in, err := json.Marshal(struct {
		Body                json.RawMessage `json:"body"`
		AddGenerationPrompt bool            `json:"add_generation_prompt"`
	}{body, addGenerationPrompt})
	if err != nil {
		return nil, fmt.Errorf("vllmref: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var rendered struct {
		Text     *string `json:"text"`
		Rejected string  `json:"rejected"`
		Error    string  `json:"error"`
	}
	if err := r.call(ctx, r.render, in, &rendered); err != nil {
		return nil, err
	}
	switch {
	case rendered.Rejected != "":
		return nil, fmt.Errorf("%w: %s", vllmsim.ErrTemplate, rendered.Rejected)
	case rendered.Error != "" || rendered.Text == nil:
		return nil, fmt.Errorf("vllmref: render-chat.py: %s", rendered.Error)
	}
	ids, err := r.encode(ctx, *rendered.Text)
	if err != nil {
		return nil, err
	}
	r.prompts++
	return ids, nil
}

// EncodeText tokenizes text with count-chat.js (no special tokens added).
func (r *Reference) EncodeText(ctx context.Context, text string) ([]int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids, err := r.encode(ctx, text)
	if err == nil {
		r.texts++
	}
	return ids, err
}

// encode runs one text through the tokenizer process; r.mu is held.
func (r *Reference) encode(ctx context.Context, text string) ([]int, error) {
	in, err := json.Marshal(struct {
		Text string `json:"text"`
	}{text})
	if err != nil {
		return nil, fmt.Errorf("vllmref: %w", err)
	}
	var out struct {
		IDs   []int  `json:"ids"`
		Error string `json:"error"`
	}
	if err := r.call(ctx, r.count, in, &out); err != nil {
		return nil, err
	}
	if out.Error != "" || out.IDs == nil {
		return nil, fmt.Errorf("vllmref: count-chat.js: %s", out.Error)
	}
	return out.IDs, nil
}

// call writes one line to c and decodes its one-line answer into out; r.mu
// is held. When ctx ends first, call returns its error and the answer still
// on its way is read (and dropped) before c's next request, so the
// processes stay in step and usable.
func (r *Reference) call(ctx context.Context, c *child, in []byte, out any) error {
	if r.broken != nil {
		return r.broken
	}
	if c.pending != nil {
		select {
		case a := <-c.pending:
			c.pending = nil
			if a.err != nil {
				return r.fail(c, a.err)
			}
		case <-ctx.Done():
			return fmt.Errorf("vllmref: %s: %w", c.name, ctx.Err())
		}
	}
	done := make(chan answer, 1)
	go func() {
		if _, err := c.stdin.Write(append(in, '\n')); err != nil {
			done <- answer{err: err}
			return
		}
		line, err := c.stdout.ReadBytes('\n')
		done <- answer{line, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		c.pending = done
		return fmt.Errorf("vllmref: %s: %w", c.name, ctx.Err())
	}
	if a.err != nil {
		return r.fail(c, a.err)
	}
	if err := json.Unmarshal(a.line, out); err != nil {
		return fmt.Errorf("vllmref: %s answered %.200q: %w", c.name, a.line, err)
	}
	return nil
}

// answer is one line read from a child, or the error that ended it.
type answer struct {
	line []byte
	err  error
}

// fail stops both processes after c failed; r.mu is held.
func (r *Reference) fail(c *child, err error) error {
	r.stopAll()
	r.broken = fmt.Errorf("%w: %s: %w (stderr: %s)", ErrBroken, c.name, err, c.stderr.String())
	return r.broken
}

func (r *Reference) stopAll() {
	r.render.stop()
	r.count.stop()
}

// Close stops both processes.
func (r *Reference) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopAll()
	if r.broken == nil {
		r.broken = fmt.Errorf("%w: closed", ErrBroken)
	}
	return nil
}

// child is one reference process.
type child struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *tailBuffer
	once   sync.Once
	// pending is the answer of a call whose context ended first.
	pending chan answer
}

func startChild(dir, name string, args ...string) (*child, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	c := &child{name: filepath.Base(args[0]), cmd: cmd, stderr: &tailBuffer{max: 4096}}
	cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("vllmref: %s: %w", c.name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("vllmref: %s: %w", c.name, err)
	}
	c.stdout = bufio.NewReaderSize(stdout, 1<<20)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("vllmref: start %s: %w", c.name, err)
	}
	return c, nil
}

// stop closes the process's input (it exits at end of input) and kills it
// if it is still running, then reaps it.
func (c *child) stop() {
	c.once.Do(func() {
		_ = c.stdin.Close()
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	})
}

// tailBuffer keeps the last max bytes written to it (a child's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = b.buf[len(b.buf)-b.max:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(bytes.TrimSpace(b.buf))
}
