package chattemplate

import (
	"errors"
	"testing"
)

func TestParsePythonJSON(t *testing.T) {
	t.Parallel()
	v, err := ParsePythonJSON(` {"name": "ssh_apply", "arguments": {"b": 1.50, "a": NaN}, "name": "give_up", "n": 7} `)
	if err != nil {
		t.Fatal(err)
	}
	name, ok := v.Member("name")
	if !ok {
		t.Fatal("no member name")
	}
	if s, ok := name.AsString(); !ok || s != "give_up" {
		t.Errorf("name = %q, %v; want the last value of the repeated key, give_up", s, ok)
	}
	args, ok := v.Member("arguments")
	if !ok {
		t.Fatal("no member arguments")
	}
	if got, want := args.Dumps(), `{"b": 1.5, "a": NaN}`; got != want {
		t.Errorf("arguments = %s, want %s", got, want)
	}
	if _, ok := args.AsString(); ok {
		t.Error("an object read as a string")
	}
	if _, ok := v.Member("missing"); ok {
		t.Error("a missing key found")
	}
	n, _ := v.Member("n")
	if _, ok := n.Member("x"); ok {
		t.Error("a member of a number found")
	}
	if got, want := v.Dumps(), `{"name": "give_up", "arguments": {"b": 1.5, "a": NaN}, "n": 7}`; got != want {
		t.Errorf("Dumps = %s, want %s", got, want)
	}
	if got := (PythonValue{}).Dumps(); got != "null" {
		t.Errorf("zero value = %s, want null", got)
	}
	if _, err := ParsePythonJSON(`{"a": 1} x`); !errors.Is(err, ErrInvalidJSON) {
		t.Errorf("trailing data: %v, want ErrInvalidJSON", err)
	}
}
