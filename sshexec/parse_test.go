package sshexec

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestCapBuffer(t *testing.T) {
	tests := []struct {
		name    string
		limit   int
		writes  []string
		want    string
		wantCut int64
	}{
		{"under the cap", 10, []string{"abc", "de"}, "abcde", 0},
		{"exactly the cap", 10, []string{"0123456789"}, "0123456789", 0},
		{"one write over", 10, []string{"0123456789AB"}, "01234" + fmt.Sprintf(CutMarker, 2) + "789AB", 2},
		{"many small writes", 6, []string{"a", "b", "c", "d", "e", "f", "g", "h"}, "abc" + fmt.Sprintf(CutMarker, 2) + "fgh", 2},
		{"tail wraps the ring", 4, []string{"ab", "cde", "fgh", "ij"}, "ab" + fmt.Sprintf(CutMarker, 6) + "ij", 6},
		{"odd cap keeps a longer tail", 5, []string{"0123456789"}, "01" + fmt.Sprintf(CutMarker, 5) + "789", 5},
		{"cap of one", 1, []string{"xyz"}, fmt.Sprintf(CutMarker, 2) + "z", 2},
		{"empty", 8, nil, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newCapBuffer(tc.limit)
			for _, w := range tc.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			got, cut := b.result()
			if got != tc.want || cut != tc.wantCut {
				t.Errorf("result = %q, %d; want %q, %d", got, cut, tc.want, tc.wantCut)
			}
		})
	}
}

// FuzzCapBuffer checks the buffer against the obvious implementation for
// any split of any input.
func FuzzCapBuffer(f *testing.F) {
	f.Add([]byte("hello, world"), uint8(4), uint8(3))
	f.Add(bytes.Repeat([]byte("ab"), 100), uint8(7), uint8(13))
	f.Add([]byte{}, uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, limit, chunk uint8) {
		lim := int(limit)%64 + 1
		step := int(chunk)%17 + 1
		b := newCapBuffer(lim)
		for i := 0; i < len(data); i += step {
			b.Write(data[i:min(i+step, len(data))])
		}
		got, cut := b.result()
		want := string(data)
		var wantCut int64
		if len(data) > lim {
			h := lim / 2
			wantCut = int64(len(data) - lim)
			want = string(data[:h]) + fmt.Sprintf(CutMarker, wantCut) + string(data[len(data)-(lim-h):])
		}
		if got != want || cut != wantCut {
			t.Fatalf("limit %d step %d: got %q (%d), want %q (%d)", lim, step, got, cut, want, wantCut)
		}
	})
}

func TestParseDestination(t *testing.T) {
	tests := []struct {
		in      string
		want    Destination
		wantErr string
	}{
		{in: "bastion", want: Destination{Host: "bastion"}},
		{in: "ops@bastion", want: Destination{User: "ops", Host: "bastion"}},
		{in: "ops@bastion:2222", want: Destination{User: "ops", Host: "bastion", Port: 2222}},
		{in: "10.0.0.1:22", want: Destination{Host: "10.0.0.1", Port: 22}},
		{in: "[::1]:2200", want: Destination{Host: "::1", Port: 2200}},
		{in: "ops@[fe80::1]", want: Destination{User: "ops", Host: "fe80::1"}},
		{in: "::1", want: Destination{Host: "::1"}},
		{in: "", wantErr: "empty"},
		{in: "@host", wantErr: "empty user"},
		{in: "ops@", wantErr: "empty host"},
		{in: "host:0", wantErr: "port"},
		{in: "host:65536", wantErr: "port"},
		{in: "host:+22", wantErr: "port"},
		{in: "host:ssh", wantErr: "port"},
		{in: "[::1", wantErr: "unclosed"},
		{in: "[::1]x", wantErr: "after ']'"},
		{in: "a:b:c", wantErr: "IPv6"},
		{in: "a b", wantErr: "space"},
		{in: "h1,h2", wantErr: "comma"},
		{in: "a@b@c", wantErr: "malformed user"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDestination(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseDestination(%q) = %+v, %v; want error containing %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseDestination(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

// FuzzParseDestination: no panics, and every accepted destination has a
// host free of separators and a valid port.
func FuzzParseDestination(f *testing.F) {
	for _, s := range []string{"ops@bastion:2222", "[::1]:22", "::1", "a@b@c", "[", "@:", "h:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDestination(s)
		if err != nil {
			return
		}
		if d.Host == "" || strings.ContainsAny(d.Host, "@[] ,/") {
			t.Fatalf("%q: accepted host %q", s, d.Host)
		}
		if d.Port < 0 || d.Port > 65535 || strings.ContainsAny(d.User, "@:") {
			t.Fatalf("%q: accepted %+v", s, d)
		}
	})
}

func TestReadLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"secret\n", "secret"},
		{"secret\r\nmore", "secret"},
		{"no newline", "no newline"},
	}
	for _, tc := range tests {
		got, err := readLine(strings.NewReader(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("readLine(%q) = %q, %v", tc.in, got, err)
		}
	}
	if _, err := readLine(strings.NewReader("")); err == nil {
		t.Error("readLine of empty input succeeded")
	}
}

func TestPgidFilter(t *testing.T) {
	const nonce = "00ff"
	tag := pgidTag + nonce + ":"
	tests := []struct {
		name     string
		writes   []string
		want     string
		wantPgid int
	}{
		{"announcement stripped", []string{tag + "4242\nwarning\n"}, "warning\n", 4242},
		{"split announcement", []string{"sshexec-", "pgid:00ff:4", "242\n", "rest"}, "rest", 4242},
		{"no announcement", []string{"bash: syntax error\n"}, "bash: syntax error\n", 0},
		{"other nonce is data", []string{pgidTag + "beef:7\n"}, pgidTag + "beef:7\n", 0},
		{"bad group is data", []string{tag + "1\n"}, tag + "1\n", 0},
		{"partial line at end", []string{"sshexec-pg"}, "sshexec-pg", 0},
		{"announcement only once", []string{tag + "9\n" + tag + "10\n"}, tag + "10\n", 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			f := newPgidFilter(&out, nonce)
			for _, w := range tc.writes {
				if n, err := f.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			f.finish()
			if out.String() != tc.want || f.group() != tc.wantPgid {
				t.Errorf("got %q pgid %d, want %q pgid %d", out.String(), f.group(), tc.want, tc.wantPgid)
			}
		})
	}
}
