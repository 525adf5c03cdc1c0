package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"gopkg.in/yaml.v3"
)

// ParseYAML parses the simple YAML inventory described in the package
// comment; name is the file name used in errors.
func ParseYAML(name string, data []byte) (inv *Inventory, err error) {
	b := newBuilder(name)
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, &ParseError{File: name, Err: fmt.Errorf("%w: %v", ErrSyntax, err)}
	}
	// A second document would be silently ignored (its hosts dropped).
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, b.errf(extra.Line, ErrSyntax, "more than one YAML document (one inventory per file)")
	} else if !errors.Is(err, io.EOF) {
		return nil, &ParseError{File: name, Err: fmt.Errorf("%w: %v", ErrSyntax, err)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return b.build() // empty file: no hosts
	}
	if err := b.duplicateKeys(&doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	list := root
	if root.Kind == yaml.MappingNode {
		list = nil
		for i := 0; i+1 < len(root.Content); i += 2 {
			k := root.Content[i]
			if k.Value != "hosts" {
				return nil, b.errf(k.Line, ErrUnknownKey, "top-level key %q (want a list of hosts or \"hosts:\")", k.Value)
			}
			list = root.Content[i+1]
		}
		if list == nil {
			return nil, b.errf(root.Line, ErrSyntax, "no \"hosts\" list")
		}
	}
	if list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
		return b.build()
	}
	if list.Kind != yaml.SequenceNode {
		return nil, b.errf(list.Line, ErrSyntax, "hosts must be a list")
	}
	// A host listed twice would be merged into one entry, silently
	// dropping the first one's address, port or user: refused, naming both.
	seen := map[string]int{}
	for _, n := range list.Content {
		if name, line := yamlHostName(n); name != "" {
			if first, dup := seen[name]; dup {
				return nil, b.errf(line, ErrDuplicateHost, "host %q is listed twice (first at line %d)", name, first)
			}
			seen[name] = line
		}
		if err := b.yamlHost(n); err != nil {
			return nil, err
		}
	}
	return b.build()
}

// yamlHostName is the name of a host entry and its line ("" when the entry
// has none; yamlHost reports that).
func yamlHostName(n *yaml.Node) (string, int) {
	if n.Kind == yaml.ScalarNode {
		return n.Value, n.Line
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k, v := n.Content[i], n.Content[i+1]; k.Value == "host" && v.Kind == yaml.ScalarNode {
				return v.Value, n.Line
			}
		}
	}
	return "", 0
}

func (b *builder) yamlHost(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Tag == "!!null" || !validHost(n.Value) {
			return b.errf(n.Line, ErrSyntax, "invalid host name %q", n.Value)
		}
		b.addHost(n.Value, "all", nil, n.Line)
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return b.errf(n.Line, ErrSyntax, "a host must be a name or a mapping")
	}
	var (
		name   string
		groups []string
		vars   = map[string]string{}
	)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		scalar := func() (string, error) {
			if v.Kind != yaml.ScalarNode {
				return "", b.errf(v.Line, ErrSyntax, "%s must be a single value", k.Value)
			}
			return v.Value, nil
		}
		switch k.Value {
		case "host":
			s, err := scalar()
			if err != nil {
				return err
			}
			name = s
		case "address":
			s, err := scalar()
			if err != nil {
				return err
			}
			vars["ansible_host"] = s
		case "port":
			s, err := scalar()
			if err != nil {
				return err
			}
			if _, perr := parsePort(s); perr != nil {
				return b.errf(v.Line, ErrPort, "port %q: %v", s, perr)
			}
			p, _ := strconv.Atoi(s)
			vars["ansible_port"] = strconv.Itoa(p)
		case "user":
			s, err := scalar()
			if err != nil {
				return err
			}
			vars["ansible_user"] = s
		case "identity":
			s, err := scalar()
			if err != nil {
				return err
			}
			vars["ansible_ssh_private_key_file"] = s
		case "groups":
			if v.Kind != yaml.SequenceNode {
				return b.errf(v.Line, ErrSyntax, "groups must be a list")
			}
			for _, g := range v.Content {
				if g.Kind != yaml.ScalarNode || !validGroup(g.Value) || g.Value == "all" {
					return b.errf(g.Line, ErrSyntax, "invalid group name %q", g.Value)
				}
				groups = append(groups, g.Value)
			}
		case "vars":
			if v.Kind != yaml.MappingNode {
				return b.errf(v.Line, ErrSyntax, "vars must be a mapping")
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				vk, vv := v.Content[j], v.Content[j+1]
				if vv.Kind != yaml.ScalarNode {
					return b.errf(vv.Line, ErrSyntax, "var %q must be a single value", vk.Value)
				}
				vars[vk.Value] = vv.Value
			}
		default:
			return b.errf(k.Line, ErrUnknownKey, "host key %q (want host, address, port, user, identity, groups, vars)", k.Value)
		}
	}
	if name == "" {
		return b.errf(n.Line, ErrSyntax, "host entry without \"host\"")
	}
	if !validHost(name) {
		return b.errf(n.Line, ErrSyntax, "invalid host name %q", name)
	}
	if len(groups) == 0 {
		groups = []string{"all"}
	}
	for _, g := range groups {
		b.addHost(name, g, vars, n.Line)
	}
	return nil
}

// duplicateKeys refuses a mapping that has a key twice (yaml.v3 keeps the
// last when decoding into a Node, silently dropping the first).
func (b *builder) duplicateKeys(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if first, dup := seen[k.Value]; dup {
				return b.errf(k.Line, ErrSyntax, "key %q appears twice (first at line %d)", k.Value, first)
			}
			seen[k.Value] = k.Line
		}
	}
	for _, c := range n.Content {
		if err := b.duplicateKeys(c); err != nil {
			return err
		}
	}
	return nil
}
