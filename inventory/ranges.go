package inventory

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// expand expands Ansible host ranges: "web[01:03].x" is web01.x, web02.x,
// web03.x; "[a:c]" is a, b, c; an optional third field is the stride.
// Several ranges multiply. The result holds at most MaxExpansion names.
func expand(pattern string) ([]string, error) {
	open := strings.IndexByte(pattern, '[')
	if open < 0 {
		if strings.IndexByte(pattern, ']') >= 0 {
			return nil, fmt.Errorf("%w: %q has \"]\" without \"[\"", ErrRange, pattern)
		}
		return []string{pattern}, nil
	}
	end := strings.IndexByte(pattern[open:], ']')
	if end < 0 {
		return nil, fmt.Errorf("%w: %q has \"[\" without \"]\"", ErrRange, pattern)
	}
	end += open
	head, body, tail := pattern[:open], pattern[open+1:end], pattern[end+1:]
	items, err := rangeItems(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrRange, pattern, err)
	}
	rest, err := expand(tail)
	if err != nil {
		return nil, err
	}
	if len(items)*len(rest) > MaxExpansion {
		return nil, fmt.Errorf("%w: %q expands to more than %d hosts", ErrRange, pattern, MaxExpansion)
	}
	out := make([]string, 0, len(items)*len(rest))
	for _, it := range items {
		for _, r := range rest {
			out = append(out, head+it+r)
		}
	}
	return out, nil
}

// rangeItems expands the inside of one bracket, "01:20", "a:f" or "0:10:2".
func rangeItems(body string) ([]string, error) {
	parts := strings.Split(body, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, errors.New("want [start:end] or [start:end:stride]")
	}
	start, end := parts[0], parts[1]
	stride := 1
	if len(parts) == 3 {
		s, err := strconv.Atoi(parts[2])
		if err != nil || s < 1 {
			return nil, fmt.Errorf("stride %q is not a positive number", parts[2])
		}
		stride = s
	}
	if start == "" || end == "" {
		return nil, errors.New("empty start or end")
	}
	if isDigits(start) && isDigits(end) {
		lo, err1 := strconv.Atoi(start)
		hi, err2 := strconv.Atoi(end)
		if err1 != nil || err2 != nil {
			return nil, errors.New("number too large")
		}
		if lo > hi {
			return nil, fmt.Errorf("start %s is after end %s", start, end)
		}
		if (hi-lo)/stride+1 > MaxExpansion {
			return nil, fmt.Errorf("more than %d hosts", MaxExpansion)
		}
		width := 0
		if len(start) > 1 && start[0] == '0' {
			width = len(start)
		}
		var out []string
		for n := 0; n <= (hi-lo)/stride; n++ {
			s := strconv.Itoa(lo + n*stride)
			for len(s) < width {
				s = "0" + s
			}
			out = append(out, s)
		}
		return out, nil
	}
	if len(start) == 1 && len(end) == 1 && sameCaseLetters(start[0], end[0]) {
		if start[0] > end[0] {
			return nil, fmt.Errorf("start %s is after end %s", start, end)
		}
		var out []string
		for c := int(start[0]); c <= int(end[0]); c += stride {
			out = append(out, string(rune(c)))
		}
		return out, nil
	}
	return nil, errors.New("start and end must both be numbers or both single letters")
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func sameCaseLetters(a, b byte) bool {
	lower := func(c byte) bool { return c >= 'a' && c <= 'z' }
	upper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	return lower(a) && lower(b) || upper(a) && upper(b)
}
