package lsp_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// A place as a model writes it on a command line or in a tool call: a
// line and the symbol on it (its second occurrence), or a column.
func ExampleParsePos() {
	p, err := lsp.ParsePos("internal/shapes/use.go:7:total#2")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s line %d: %q, occurrence %d\n", p.Path, p.Line, p.Symbol, p.Occurrence)
	p, _ = lsp.ParsePos("use.go:15:22")
	fmt.Printf("%s line %d column %d\n", p.Path, p.Line, p.Column)
	// Output:
	// internal/shapes/use.go line 7: "total", occurrence 2
	// use.go line 15 column 22
}

// What a model reads: locations as path:line:col with their source line,
// grouped by file.
func ExampleLocations_Render() {
	res := &lsp.Locations{
		Answer: lsp.Answer{Op: lsp.OpReferences, Server: "gopls",
			At: &lsp.Location{Path: "/p/use.go", Line: 7, Column: 21, EndLine: 7, EndColumn: 25, Text: "\t\ttotal = total + s.Area()"}},
		Locations: []lsp.Location{
			{Path: "/p/shapes.go", Line: 5, Column: 2, Text: "\tArea() float64"},
			{Path: "/p/use.go", Line: 7, Column: 21, Text: "\t\ttotal = total + s.Area()"},
		},
	}
	fmt.Print(res.Render(&lsp.NavRenderOptions{ProjectDir: "/p"}))
	// Output:
	// References to Area (use.go:7:21), from gopls: 2 in 2 files
	//
	// shapes.go:5:2: Area() float64
	//
	// use.go:7:21: total = total + s.Area()
}

// Navigation on the manager's servers: references to the symbol Area on
// line 7, then a rename shown to the user before anything is written. (Not
// run: it needs gopls.)
func ExampleManager_References() {
	gopls, err := lsp.FindGopls(nil)
	if err != nil {
		log.Fatal(err)
	}
	dir := "/home/me/project"
	m, err := lsp.NewManager([]lsp.ServerConfig{lsp.GoplsConfig(gopls, dir)}, &lsp.ManagerOptions{ProjectDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	refs, err := m.References(ctx, lsp.Pos{Path: dir + "/use.go", Line: 7, Symbol: "Area"}, true)
	if err != nil {
		log.Fatal(err) // *lsp.PosError shows the line; lsp.ErrUnsupported; *lsp.ServerError
	}
	fmt.Print(refs.Render(&lsp.NavRenderOptions{ProjectDir: dir}))

	p, err := m.Rename(ctx, lsp.Pos{Path: dir + "/shapes.go", Line: 5, Symbol: "Area"}, "Size")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(p.Diff)                          // nothing is written yet
	applied, err := m.ApplyRename(ctx, p, nil) // or a callback through the IDE's diff review
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(applied.Render(&lsp.NavRenderOptions{ProjectDir: dir}))
}
