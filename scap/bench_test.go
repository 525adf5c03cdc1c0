package scap

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkParseDatastream parses the committed excerpt and, when
// NIGHTSHIFT_SSG_DS names it, the full ssg-debian12-ds.xml (10 MB, 591
// rules).
func BenchmarkParseDatastream(b *testing.B) {
	files := map[string]string{"excerpt": excerpt}
	if p := os.Getenv("NIGHTSHIFT_SSG_DS"); p != "" {
		files["full"] = p
	}
	for name, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(bytes.NewReader(data), name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDatastreamSet builds the worker rules of a profile.
func BenchmarkDatastreamSet(b *testing.B) {
	d := loadExcerpt(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Set(Options{Profile: "anssi_bp28_high"}); err != nil {
			b.Fatal(err)
		}
	}
}
