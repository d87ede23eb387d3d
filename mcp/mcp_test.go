package mcp

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestSupportedProtocolVersions(t *testing.T) {
	v := SupportedProtocolVersions()
	want := []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("SupportedProtocolVersions() = %q, want %q", v, want)
	}
	v[0] = "changed by the caller"
	if SupportedProtocolVersions()[0] != LegacyProtocolVersion || !IsSupportedProtocolVersion(LegacyProtocolVersion) {
		t.Fatal("a caller changed the accepted versions through the returned slice")
	}
	for _, ok := range want {
		if !IsSupportedProtocolVersion(ok) {
			t.Errorf("%s not accepted", ok)
		}
	}
	for _, bad := range []string{"", "2099-01-01", "2024-11-05 "} {
		if IsSupportedProtocolVersion(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
	if !IsSupportedProtocolVersion(ProtocolVersion) {
		t.Error("the version a client asks for is not one it accepts")
	}
}

func TestClosedDiffTabs(t *testing.T) {
	for _, n := range []int{0, 1, 2, 17, 1 << 20} {
		s := ClosedDiffTabs(n)
		if got, ok := ParseClosedDiffTabs(" " + s + "\n"); !ok || got != n {
			t.Errorf("ParseClosedDiffTabs(%q) = %d, %v", s, got, ok)
		}
	}
	if ClosedDiffTabs(2) != "CLOSED_2_DIFF_TABS" {
		t.Errorf("ClosedDiffTabs(2) = %q", ClosedDiffTabs(2))
	}
	for _, bad := range []string{"", "CLOSED__DIFF_TABS", "CLOSED_-1_DIFF_TABS", "CLOSED_1_DIFF_TAB", "closed_1_diff_tabs",
		"CLOSED_١_DIFF_TABS", "CLOSED_99999999999999999999999_DIFF_TABS", "TAB_CLOSED"} {
		if n, ok := ParseClosedDiffTabs(bad); ok {
			t.Errorf("ParseClosedDiffTabs(%q) = %d, true", bad, n)
		}
	}
}

func TestDecodeToolResult(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		text      string   // result's Text (no error)
		types     []string // its content types
		te        *ToolError
		fails     bool // an error that is not a *ToolError
	}{
		{name: "text", raw: `{"content":[{"type":"text","text":"a"}]}`, text: "a", types: []string{"text"}},
		{name: "mixed", raw: `{"content":[{"type":"text","text":"a"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"b"}]}`,
			text: "a\nb", types: []string{"text", "image", "text"}},
		{name: "escaped slashes", raw: `{"content":[{"type":"text","text":"{\"p\":\"\\/home\\/dev\"}"}]}`, text: `{"p":"\/home\/dev"}`, types: []string{"text"}},
		{name: "empty", raw: `{"content":[]}`, types: []string{}},
		{name: "no content", raw: `{}`},
		{name: "unknown members", raw: ` {"content":[{"type":"text","text":"x","annotations":{}}],"_meta":{"k":1}} `, text: "x", types: []string{"text"}},
		{name: "case-folded key", raw: `{"Content":[{"Type":"text","Text":"folded"}]}`, text: "folded", types: []string{"text"}},
		{name: "isError", raw: `{"content":[{"type":"text","text":"it broke"}],"isError":true}`,
			te: &ToolError{Tool: "t", Message: "it broke"}},
		{name: "neovim quirk", raw: `{"message":"Buffer operation error","code":-32000,"data":"Failed"}`,
			te: &ToolError{Tool: "t", Code: -32000, Message: "Buffer operation error", Data: json.RawMessage(`"Failed"`)}},
		{name: "error object next to content", raw: `{"content":[],"code":1,"message":"m"}`, types: []string{}},
		{name: "not JSON", raw: `{"content":[`, fails: true},
		{name: "trailing garbage", raw: `{"content":[]} x`, fails: true},
		{name: "missing colon", raw: `{"content" []}`, fails: true},
		{name: "array", raw: `[1]`, fails: true},
		{name: "content not an array", raw: `{"content":"x"}`, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeToolResult("t", json.RawMessage(tc.raw))
			var te *ToolError
			switch {
			case tc.fails:
				if err == nil || errors.As(err, &te) {
					t.Fatalf("got %+v, %v; want a decoding error", r, err)
				}
			case tc.te != nil:
				if !errors.As(err, &te) {
					t.Fatalf("got %+v, %v; want a *ToolError", r, err)
				}
				te.Result = nil
				if !reflect.DeepEqual(te, tc.te) {
					t.Fatalf("ToolError %#v, want %#v", te, tc.te)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if r.Text() != tc.text || string(r.Raw) != tc.raw {
					t.Errorf("Text %q Raw %s", r.Text(), r.Raw)
				}
				var types []string
				if r.Content != nil {
					types = []string{}
				}
				for _, c := range r.Content {
					types = append(types, c.Type)
				}
				if !reflect.DeepEqual(types, tc.types) {
					t.Errorf("types %q, want %q", types, tc.types)
				}
			}
		})
	}
}

func TestToolErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		e    ToolError
		want string
	}{
		{ToolError{Tool: "openFile", Message: "no such file"}, "IDE tool openFile failed: no such file"},
		{ToolError{Tool: "x", Code: -32601, Message: "Tool not found: x"}, "IDE tool x failed (code -32601): Tool not found: x"},
		{ToolError{Tool: "close_tab", Code: -32000, Message: "Buffer operation error", Data: json.RawMessage(`"Failed"`)}, "IDE tool close_tab failed (code -32000): Buffer operation error (Failed)"},
		{ToolError{Tool: "y", Message: "same", Data: json.RawMessage(`"same"`)}, "IDE tool y failed: same"},
		{ToolError{Tool: "z", Data: json.RawMessage(`{"k":[1]}`)}, `IDE tool z failed ({"k":[1]})`},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
	long := ToolError{Tool: "l", Data: json.RawMessage(`"` + strings.Repeat("d", 300) + `"`)}
	if got := long.Error(); len(got) > 250 || !strings.HasSuffix(got, "...)") {
		t.Errorf("long data not shortened: %d bytes", len(got))
	}
}

func TestResultConstructors(t *testing.T) {
	r := TextResult("FILE_SAVED", "text")
	if r.IsError || r.Text() != "FILE_SAVED\ntext" || len(r.Content) != 2 || r.Content[0].Type != "text" {
		t.Errorf("TextResult: %+v", r)
	}
	b, err := json.Marshal(ErrorResult("no"))
	if err != nil || string(b) != `{"content":[{"type":"text","text":"no"}],"isError":true}` {
		t.Errorf("ErrorResult encodes as %s, %v", b, err)
	}
	b, err = json.Marshal(&ToolResult{Content: []Content{}, Raw: json.RawMessage(`{"x":1}`)})
	if err != nil || string(b) != `{"content":[]}` {
		t.Errorf("Raw leaked into the encoding: %s, %v", b, err)
	}
}

func TestErrorKeepsItsCode(t *testing.T) {
	var err error = &Error{Code: CodeFileNotOpen, Message: "File not open"}
	if !errors.Is(err, &Error{Code: CodeFileNotOpen}) || errors.Is(err, &Error{Code: CodeMethodNotFound}) {
		t.Errorf("errors.Is does not match by code: %v", err)
	}
}
