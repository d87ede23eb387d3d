package jsonrpc

// Kind classifies a raw JSON value by its first byte: "object", "array",
// "string", "boolean", "null" or "number", and "missing" for an empty
// value. It expects valid JSON without leading space, as encoding/json
// hands raw values out.
func Kind(b []byte) string {
	if len(b) == 0 {
		return "missing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// WithArticle returns a kind from Kind as a phrase for an error message:
// "an object", "a string", "null", "missing".
func WithArticle(kind string) string {
	switch kind {
	case "object", "array":
		return "an " + kind
	case "missing", "null":
		return kind
	}
	return "a " + kind
}
