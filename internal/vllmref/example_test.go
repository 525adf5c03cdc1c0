package vllmref_test

import (
	"context"
	"fmt"

	"github.com/nightshift-dev/nightshift/internal/vllmref"
)

// A test starts the reference once and plugs it into the simulator as
// vllmsim.Config.Prompts; here it counts one request.
func Example() {
	r, err := vllmref.Start(context.Background(), vllmref.Config{Family: "qwen3"})
	if err != nil {
		fmt.Println(err) // without python3+jinja2 or node+tokenizers: ErrUnavailable
		return
	}
	defer r.Close()
	ids, err := r.EncodeChatRequest(context.Background(), []byte(`{"messages":[{"role":"user","content":"hi"}]}`), true)
	fmt.Println(len(ids), err)
}
