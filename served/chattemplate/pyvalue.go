package chattemplate

// PythonValue is a JSON text decoded as Python's json.loads decodes it, for
// callers that read parts of it and re-serialise them with json.dumps: vLLM's
// hermes tool parser (json.loads of a <tool_call> block, then
// json.dumps(call["arguments"], ensure_ascii=False)), reproduced by vllmsim.
// The zero value is JSON null.
type PythonValue struct{ v jsonValue }

// ParsePythonJSON decodes text as [PythonJSON] reads it, with the same
// errors.
func ParsePythonJSON(text string) (PythonValue, error) {
	v, err := parsePython(wireString(text))
	if err != nil {
		return PythonValue{}, err
	}
	return PythonValue{v}, nil
}

// Member returns the value of key when v is an object that has it (a
// repeated key holds its last value, as in a Python dict); ok is false
// otherwise.
func (v PythonValue) Member(key string) (_ PythonValue, ok bool) {
	if v.v.kind != jsonObject {
		return PythonValue{}, false
	}
	for i, k := range v.v.keys {
		if k == key {
			return PythonValue{v.v.items[i]}, true
		}
	}
	return PythonValue{}, false
}

// AsString returns the decoded string when v is a JSON string; ok is false
// otherwise.
func (v PythonValue) AsString() (_ string, ok bool) {
	if v.v.kind != jsonString {
		return "", false
	}
	return v.v.text, true
}

// Dumps returns json.dumps(v, ensure_ascii=False), written as [PythonJSON]
// writes it.
func (v PythonValue) Dumps() string {
	return string(v.v.appendPython(nil))
}
