package faultserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/nightshift-dev/nightshift/internal/faultserver"
)

// A proxy's HTML page answers the first chat completion, then the real
// server (here a fixed completion) answers the next.
func Example() {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`)
	})
	s, err := faultserver.New(faultserver.Config{Next: next, Faults: []faultserver.Fault{{Kind: faultserver.HTML}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	url, err := s.Start(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
		if err != nil {
			fmt.Println(err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"), strings.SplitN(string(b), "\n", 2)[0])
	}
	fmt.Printf("%+v\n", s.Stats())
	// Output:
	// 200 text/html <html>
	// 200 text/plain; charset=utf-8 {"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}
	// {Faults:1 Normal:1}
}
