package bpe_test

import (
	"compress/gzip"
	"fmt"
	"os"

	"github.com/nightshift-dev/nightshift/served/bpe"
)

// The IDs below are those HF tokenizers gives for the same text.
func Example() {
	f, err := os.Open("../models/qwen3/tokenizer.json.gz")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	tok, err := bpe.Load(zr)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := tok.Encode("<|im_start|>user\nDisable root login over SSH.<|im_end|>")
	fmt.Println(ids)
	fmt.Println(tok.Count("systemctl reload sshd"))
	fmt.Printf("%q\n", tok.Decode(ids[1:4]))
	// Output:
	// [151644 872 198 25479 3704 5858 916 40463 13 151645]
	// 5
	// "user\nDisable"
}
