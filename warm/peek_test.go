package warm

import "testing"

// TestPeek: the fast path and the decoder agree on every shape.
func TestPeek(t *testing.T) {
	for _, c := range []struct {
		in, id, method string
		req            bool
	}{
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}`, "3", "tools/call", true},
		{`{"jsonrpc":"2.0","id":"a,b","result":{}}`, `"a,b"`, "", false},
		{`{"jsonrpc":"2.0","id":-1,"error":{"code":1}}`, "-1", "", false},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", "notifications/initialized", true},
		{`{"method":"ping","id":7,"jsonrpc":"2.0"}`, "7", "ping", true},
		{`{"jsonrpc":"2.0","id":"a\"b","result":1}`, `"a\"b"`, "", false},
		{`{"jsonrpc":"2.0", "id": 4, "method": "x"}`, "4", "x", true},
		{`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"cut here`, "5", "", false},
		{`[1,2]`, "", "", false},
	} {
		id, method, req := peek([]byte(c.in))
		if id != c.id || method != c.method || req != c.req {
			t.Errorf("peek(%s) = %q %q %v, want %q %q %v", c.in, id, method, req, c.id, c.method, c.req)
		}
	}
}
