package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
)

func marshalNoHTML(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " and \ backslash`, "tab\tnl\ncr\r", "\x00\x01\x1f\x7f",
		"<html> & co", "✻ [Claude Code] main.go (38e1f7) ⧉", "bad \xff utf8 \xc3",
		"line\u2028sep\u2029", "emoji 🙂", "/home/dev/proj",
	} {
		got := AppendString(nil, s)
		want := marshalNoHTML(t, s)
		if !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestAppendMessagesDecode(t *testing.T) {
	req := append(AppendRequestHead(nil, 42, "tools/call"), `,"params":{"name":"x"}}`...)
	m, err := Decode(req)
	if err != nil || !m.IsRequest() || m.Method != "tools/call" || string(m.ID) != "42" {
		t.Fatalf("request %s decoded as %+v, %v", req, m, err)
	}
	note := append(AppendNotificationHead(nil, "notifications/initialized"), '}')
	m, err = Decode(note)
	if err != nil || !m.IsNotification() {
		t.Fatalf("notification %s decoded as %+v, %v", note, m, err)
	}
	res := AppendResult(nil, []byte(`"abc"`), []byte(`{}`))
	m, err = Decode(res)
	if err != nil || !m.IsResponse() || string(m.Result) != "{}" {
		t.Fatalf("result %s decoded as %+v, %v", res, m, err)
	}
	e := AppendError(nil, []byte(`7`), CodeMethodNotFound, "Method not found: \"x\"")
	m, err = Decode(e)
	if err != nil || m.Error == nil || m.Error.Code != CodeMethodNotFound || m.Error.Message != `Method not found: "x"` {
		t.Fatalf("error %s decoded as %+v, %v", e, m, err)
	}
}

func TestParseIntID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"17", 17, true}, {`"17"`, 17, true}, {"-3", -3, true},
		{strconv.FormatInt(1<<63-1, 10), 1<<63 - 1, true},
		{"9223372036854775808", 0, false}, {"1.5", 0, false}, {`"a"`, 0, false},
		{"", 0, false}, {"-", 0, false}, {`""`, 0, false}, {"null", 0, false},
	} {
		got, ok := ParseIntID([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseIntID(%s) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
