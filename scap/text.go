package scap

import (
	"encoding/xml"
	"strings"
)

// richText is XCCDF text (xccdf:description, rationale, title): character
// data with XHTML markup and xccdf:sub value references, kept as segments so
// that a profile's values can be substituted when it is read.
type richText []textSegment

type textSegment struct {
	text  string // literal text; empty for a reference
	value string // full id of a referenced xccdf:Value
}

// UnmarshalXML keeps the first occurrence of the element (later xml:lang
// variants are skipped) and flattens its markup: block elements and <br>
// become line breaks, list items start with "- ".
func (t *richText) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	if *t != nil {
		return d.Skip()
	}
	out := richText{}
	add := func(s string) {
		if n := len(out); n > 0 && out[n-1].value == "" {
			out[n-1].text += s
			return
		}
		out = append(out, textSegment{text: s})
	}
	for depth := 0; ; {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.CharData:
			add(string(tok))
		case xml.StartElement:
			depth++
			switch tok.Name.Local {
			case "sub":
				if id := attr(tok, "idref"); id != "" {
					out = append(out, textSegment{value: id})
				}
			case "br", "p", "pre", "div", "ul", "ol", "table", "tr":
				add("\n")
			case "li":
				add("\n- ")
			}
		case xml.EndElement:
			if depth == 0 {
				*t = out
				return nil
			}
			depth--
			switch tok.Name.Local {
			case "p", "pre", "div", "ul", "ol", "li", "table", "tr":
				add("\n")
			case "td", "th":
				add(" ")
			}
		}
	}
}

// plain renders the text with value references replaced by values[id] (the
// value's short id in angle brackets when values has none), each line
// trimmed, runs of blank lines collapsed to one.
func (t richText) plain(values map[string]string) string {
	var b strings.Builder
	for _, s := range t {
		if s.value == "" {
			b.WriteString(s.text)
			continue
		}
		if v, ok := values[s.value]; ok {
			b.WriteString(v)
		} else {
			b.WriteString("<" + ShortID(s.value) + ">")
		}
	}
	lines := strings.Split(b.String(), "\n")
	out := lines[:0]
	blank := true // drops leading blank lines
	for _, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
