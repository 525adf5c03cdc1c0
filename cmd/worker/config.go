package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/nightshift-dev/nightshift/internal/readfile"
)

// A configuration file is YAML (gopkg.in/yaml.v3, which the rules and
// inventories are already read with): one mapping whose keys are the
// command's flag names without dashes in front and whose values are what
// the flag takes (a list for a repeatable flag):
//
//	base-url: http://gpu1:8000/v1
//	parallel-hosts: 8
//	rules: [rules/ssh.yaml, rules/audit.yaml]
//
// It is read strictly: a key that is not a flag of the command, a key
// given twice, a list for a flag that takes one value or a second YAML
// document is an error naming the file, the line and the key. Each flag
// takes its value from the first of: the command line, the environment
// variable NIGHTSHIFT_<NAME> (the name upper-cased, dashes as
// underscores: NIGHTSHIFT_BASE_URL; an empty variable is as if unset; a
// repeatable flag's variable gives one value), the file, the flag's default. Relative paths in the file and the
// environment are relative to the working directory, as on the command
// line.

// configHelp is the paragraph of help of each command that takes --config.
const configHelp = `Flags may also come from a YAML file (--config FILE, or $NIGHTSHIFT_CONFIG)
whose keys are flag names (a list for a repeatable flag), and from the
environment: NIGHTSHIFT_ and the name in capitals, dashes as underscores
(NIGHTSHIFT_BASE_URL). A flag on the command line wins over the
environment, which wins over the file, which wins over the default. The
file is read strictly: a key that is not a flag is an error naming it and
its line.
`

// configMaxBytes caps a configuration file.
const configMaxBytes = 1 << 20

// envPrefix starts the environment variable of every flag of a command
// that takes --config.
const envPrefix = "NIGHTSHIFT_"

// envName is the environment variable of flag name.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// configErr is an error in a configuration file, at a line.
func configErr(path string, line int, format string, args ...any) error {
	return usagef("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
}

// applyConfig gives each flag of f not set on the command line its value
// from the environment, else from the configuration file (--config, else
// $NIGHTSHIFT_CONFIG, which is the flag's variable; none: no file).
func (f *flags) applyConfig() error {
	given := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	var err error
	f.VisitAll(func(fl *flag.Flag) {
		if err != nil || given[fl.Name] || isRefused(fl) {
			return // a flag of 'worker run' that fleet start refuses: its variable is run's
		}
		v := os.Getenv(envName(fl.Name))
		if v == "" {
			return
		}
		if serr := f.Set(fl.Name, v); serr != nil {
			err = usagef("$%s: %v", envName(fl.Name), serr)
			return
		}
		given[fl.Name] = true
	})
	if err != nil {
		return err
	}
	path := f.Lookup("config").Value.String()
	if path == "" {
		return nil
	}
	data, err := readfile.Read(path, configMaxBytes)
	if err != nil {
		return usagef("--config: %v", err)
	}
	return f.applyFile(path, data, given)
}

// applyFile sets the flags data (a configuration file) gives, except
// those given already.
func (f *flags) applyFile(path string, data []byte, given map[string]bool) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file
		}
		return usagef("%s: not valid YAML: %v", path, err)
	}
	var second yaml.Node
	if err := dec.Decode(&second); !errors.Is(err, io.EOF) {
		return configErr(path, second.Line, "a second YAML document (one mapping of flag names is expected)")
	}
	if len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return configErr(path, m.Line, "want a mapping of flag names to values")
	}
	first := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return configErr(path, k.Line, "a key must be a flag name")
		}
		name := k.Value
		if line, ok := first[name]; ok {
			return configErr(path, k.Line, "key %q given twice (first at line %d)", name, line)
		}
		first[name] = k.Line
		fl := f.Lookup(name)
		if fl == nil || name == "config" {
			return configErr(path, k.Line, "unknown key %q: not a flag of %s", name, f.Name())
		}
		if isRefused(fl) {
			return configErr(path, k.Line, "key %q: %s", name, refusedWhy(name))
		}
		values, err := configValues(fl, v)
		if err != nil {
			return configErr(path, v.Line, "%s: %v", name, err)
		}
		if given[name] {
			continue
		}
		for _, s := range values {
			if err := f.Set(name, s); err != nil {
				return configErr(path, v.Line, "%s: %v", name, err)
			}
		}
	}
	return nil
}

// configValues are the values node gives flag fl: one scalar, or a list
// of them for a repeatable flag.
func configValues(fl *flag.Flag, node *yaml.Node) ([]string, error) {
	_, repeatable := fl.Value.(*stringList)
	switch {
	case node.Kind == yaml.ScalarNode && node.Tag == "!!null":
		return nil, errors.New("no value")
	case node.Kind == yaml.ScalarNode:
		return []string{node.Value}, nil
	case node.Kind == yaml.SequenceNode && repeatable:
		var out []string
		for _, item := range node.Content {
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
				return nil, fmt.Errorf("line %d: want a value, not a list or mapping", item.Line)
			}
			out = append(out, item.Value)
		}
		return out, nil
	case node.Kind == yaml.SequenceNode:
		return nil, errors.New("takes one value, not a list")
	}
	return nil, errors.New("want a value, not a mapping")
}
