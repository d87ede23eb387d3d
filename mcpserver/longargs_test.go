package mcpserver

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// Issue 19 row 8: a name argument (a path) or an argument's name of
// megabytes is refused with its start quoted, before it is decoded: the
// refusal allocates nothing of the argument's size. Text a tool writes (a
// *string argument) is decoded whatever its size.
func TestOverlongNameArguments(t *testing.T) {
	type args struct {
		File    string  `json:"file"`
		Line    int     `json:"line"`
		Content *string `json:"content"`
	}
	ran := 0
	tool := defineTool(toolSpec{name: "t", input: `{"type":"object"}`}, func(_ context.Context, a *args) *mcp.ToolResult {
		ran++
		return textf("ran")
	})
	big := strings.Repeat("é", 4<<20) // 8 MiB
	call := func(arguments map[string]any) (*mcp.ToolResult, uint64) {
		raw, err := json.Marshal(arguments)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err := tool.Handler(context.Background(), &ideserver.ToolCall{Name: "t", Arguments: raw})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return res, after.TotalAlloc - before.TotalAlloc
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"path", map[string]any{"file": big, "line": 1}, "The argument file of t is 8388608 bytes long (éé"},
		{"path, another case", map[string]any{"FILE": big}, "The argument FILE of t is 8388608 bytes long (éé"},
		{"argument name", map[string]any{big: 1}, "t has no argument named éé"},
	} {
		res, allocated := call(tc.args)
		text := res.Text()
		if !res.IsError || !strings.Contains(text, tc.want) || !strings.Contains(text, "(8388608 bytes in all)") || len(text) > 2000 {
			t.Errorf("%s: answered (isError %v) %.500s\nwant it to say %q and the size", tc.name, res.IsError, text, tc.want)
		}
		if allocated > 1<<20 {
			t.Errorf("%s: refusing it allocated %d bytes; want less than 1 MiB", tc.name, allocated)
		}
	}
	if ran != 0 {
		t.Errorf("the tool ran %d times", ran)
	}
	res, _ := call(map[string]any{"file": "x.go", "content": big})
	if res.IsError || ran != 1 {
		t.Errorf("8 MiB of content: isError %v, ran %d: %.300s", res.IsError, ran, res.Text())
	}
}

// The name arguments of a tool, its embedded structs' included (posArgs),
// get a maxLength in its input schema, which ideserver applies while a
// long message is read; text arguments (*string) get none. An embedded
// struct's name argument of megabytes is refused as the tool's own is.
func TestNameArgumentsBoundedInSchema(t *testing.T) {
	type args struct {
		posArgs
		NewName string  `json:"new_name"`
		Content *string `json:"content"`
	}
	ran := 0
	tool := defineTool(toolSpec{name: "t", input: objectSchema(append(posProps[:len(posProps):len(posProps)],
		prop{"new_name", typed("string", "n")}, prop{"content", typed("string", "c")}))},
		func(_ context.Context, a *args) *mcp.ToolResult {
			ran++
			return textf("ran")
		})
	var schema struct {
		Properties map[string]struct {
			Type      string `json:"type"`
			MaxLength *int   `json:"maxLength"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
		t.Fatalf("%v: %s", err, tool.InputSchema)
	}
	for name, p := range schema.Properties {
		bounded := p.MaxLength != nil && *p.MaxLength == maxNameArg
		if want := p.Type == "string" && name != "content"; bounded != want {
			t.Errorf("property %s (%s): maxLength %v, want it bounded: %v", name, p.Type, p.MaxLength, want)
		}
	}
	if _, ok := schema.Properties["file"]; !ok {
		t.Fatalf("no file property: %s", tool.InputSchema)
	}
	raw, _ := json.Marshal(map[string]any{"file": strings.Repeat("p", 1<<20), "line": 1})
	res, err := tool.Handler(context.Background(), &ideserver.ToolCall{Name: "t", Arguments: raw})
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "The argument file of t is 1048576 bytes long") || ran != 0 {
		t.Errorf("a 1 MiB file of an embedded struct: %v, ran %d: %.300s", err, ran, res.Text())
	}
}
