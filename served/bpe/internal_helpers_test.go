package bpe

import (
	"bytes"
	"compress/gzip"
	"testing"
)

func loadGz(tb testing.TB, gz []byte) *Tokenizer {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		tb.Fatal(err)
	}
	t, err := Load(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}
