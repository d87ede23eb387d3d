package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// normJSON makes two encodings of one JSON value comparable: compact, with
// HTML characters escaped as encoding/json writes them.
func normJSON(t *testing.T, raw []byte) string {
	t.Helper()
	if len(raw) == 0 {
		return ""
	}
	var c, h bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		t.Fatalf("raw member %q is not JSON: %v", raw, err)
	}
	json.HTMLEscape(&h, c.Bytes())
	return h.String()
}

// FuzzJSONRPCDecode checks the JSON-RPC decoder, which sees every byte an
// IDE sends: it never panics; its single-pass path agrees with encoding/json
// (DecodeStd) on every input; a failure wraps ErrInvalidMessage; a decoded
// message is exactly one of request, notification and response; encoded
// again and decoded again it is the same message, and the second encoding
// is identical to the first; ids the client matches replies by are read
// exactly; the append-style string encoder agrees with encoding/json; and
// so do the scanners the client decodes tool results with.
func FuzzJSONRPCDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		checkScanners(t, data)
		m, err := jsonrpc.Decode(data)
		ref, refErr := jsonrpc.DecodeStd(data)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("Decode(%q) error %v, but encoding/json says %v", data, err, refErr)
		}
		if err == nil && !reflect.DeepEqual(m, ref) {
			t.Fatalf("Decode(%q) = %+v, encoding/json says %+v", data, m, ref)
		}
		if err != nil {
			if m != nil || !errors.Is(err, jsonrpc.ErrInvalidMessage) {
				t.Fatalf("Decode(%q) = %v, %v; want nil and ErrInvalidMessage", data, m, err)
			}
			return
		}
		kinds := 0
		for _, k := range []bool{m.IsRequest(), m.IsNotification(), m.IsResponse()} {
			if k {
				kinds++
			}
		}
		if kinds != 1 {
			t.Fatalf("%q is %d of request/notification/response", data, kinds)
		}

		b1, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("re-encoding %q: %v", data, err)
		}
		m2, err := jsonrpc.Decode(b1)
		if err != nil {
			t.Fatalf("decoding the re-encoding %s of %q: %v", b1, data, err)
		}
		b2, err := json.Marshal(m2)
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("encodings differ:\n%s\n%s", b1, b2)
		}
		if m.JSONRPC != m2.JSONRPC || m.Method != m2.Method ||
			normJSON(t, m.ID) != normJSON(t, m2.ID) || normJSON(t, m.Params) != normJSON(t, m2.Params) ||
			normJSON(t, m.Result) != normJSON(t, m2.Result) || (m.Error == nil) != (m2.Error == nil) {
			t.Fatalf("round trip changed the message:\n%+v\n%+v", m, m2)
		}
		if m.Error != nil && (m.Error.Code != m2.Error.Code || m.Error.Message != m2.Error.Message || normJSON(t, m.Error.Data) != normJSON(t, m2.Error.Data)) {
			t.Fatalf("round trip changed the error: %+v vs %+v", m.Error, m2.Error)
		}

		// Reply matching: ParseIntID agrees with strconv on the id's text.
		if id, ok := jsonrpc.ParseIntID(m.ID); ok {
			text := string(m.ID)
			if uq, err := strconv.Unquote(text); err == nil {
				text = uq
			}
			if want, err := strconv.ParseInt(text, 10, 64); err != nil || want != id {
				t.Fatalf("ParseIntID(%s) = %d, strconv says %d, %v", m.ID, id, want, err)
			}
		}

		// The client's own encoder writes the method back as encoding/json
		// reads it.
		var back string
		if err := json.Unmarshal(jsonrpc.AppendString(nil, m.Method), &back); err != nil || back != m.Method {
			t.Fatalf("AppendString(%q) read back as %q, %v", m.Method, back, err)
		}
	})
}

// checkScanners holds the single-pass scanners to encoding/json: the same
// verdict on validity for objects and arrays, and the same string for every
// string literal.
func checkScanners(t *testing.T, data []byte) {
	valid := json.Valid(data)
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	all := func([]byte, []byte) bool { return true }
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var members []string
		got := jsonrpc.ScanObject(data, func(key, value []byte) bool {
			members = append(members, string(key)+"="+normJSON(t, value))
			return true
		})
		if got != valid {
			t.Fatalf("ScanObject(%q) = %v, json.Valid says %v", data, got, valid)
		}
		if valid {
			if want := objectMembers(t, data); !reflect.DeepEqual(members, want) {
				t.Fatalf("ScanObject(%q) members %q, encoding/json reads %q", data, members, want)
			}
		}
	} else if jsonrpc.ScanObject(data, all) {
		t.Fatalf("ScanObject accepted a non-object %q", data)
	}
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if got := jsonrpc.ScanArray(data, func([]byte) bool { return true }); got != valid {
			t.Fatalf("ScanArray(%q) = %v, json.Valid says %v", data, got, valid)
		}
	}
	lit := append(append([]byte{'"'}, data...), '"')
	got, ok := jsonrpc.UnquoteString(lit)
	var want string
	werr := json.Unmarshal(lit, &want)
	if ok != (werr == nil) || got != want {
		t.Fatalf("UnquoteString(%q) = %q, %v; encoding/json says %q, %v", lit, got, ok, want, werr)
	}
}

// objectMembers lists the members of a valid JSON object as encoding/json's
// tokenizer reads them: each key as written between its quotes, and its
// value compacted.
func objectMembers(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	var out []string
	for dec.More() {
		start := dec.InputOffset()
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		rawKey := bytes.TrimSpace(bytes.TrimLeft(data[start:dec.InputOffset()], " \t\r\n,"))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, string(rawKey[1:len(rawKey)-1])+"="+normJSON(t, v))
	}
	return out
}
