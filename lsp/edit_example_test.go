package lsp_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/lsp"
)

// Verified edits: a change of Add's signature staged in the servers (not
// written), checked for what it breaks in the files that call Add, then
// staged again with the fix of its caller and written, all or nothing.
// (Not run: it needs gopls.)
func ExampleEditSet() {
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	es := m.NewEditSet()
	defer es.Discard(ctx) // the servers back on the disk's text, unless applied
	err = es.Stage(ctx, []lsp.Edit{{File: dir + "/calc/a.go",
		OldString: "func Add(a, b int) int {", NewString: "func Add(a, b, c int) int {"}})
	if err != nil {
		log.Fatal(err) // no match, several, an unknown symbol: nothing staged
	}
	check, err := es.Check(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(check.Render(dir)) // app/c.go: 1 introduced ...
	err = es.Stage(ctx, []lsp.Edit{{File: dir + "/app/c.go",
		OldString: "calc.Add(1, 2)", NewString: "calc.Add(1, 2, 0)"}})
	if err != nil {
		log.Fatal(err)
	}
	if check, err = es.Check(ctx); err != nil || check.Introduced > 0 {
		log.Fatal(err, check.Render(dir))
	}
	applied, err := es.Apply(ctx, nil)
	if err != nil {
		log.Fatal(err) // errors.Is(err, lsp.ErrEditConflict): a file changed on disk; nothing written
	}
	fmt.Println(applied.Written)
}

// What a check says, for a person or a model.
func ExampleEditCheck_Render() {
	c := &lsp.EditCheck{
		Files: []lsp.FileCheck{
			{Path: "/p/calc/a.go", Edited: true, Server: "gopls", Status: lsp.StatusComplete},
			{Path: "/p/app/c.go", Server: "gopls", Status: lsp.StatusComplete, Introduced: []diag.Diagnostic{{
				Range:    diag.Range{Start: diag.Position{Line: 5, Character: 37}},
				Severity: diag.SeverityError, Source: "compiler",
				Message: "not enough arguments in call to calc.Add\n\thave (number, number)\n\twant (int, int, int)"}}},
		},
		Introduced: 1,
		Status:     lsp.StatusComplete,
	}
	fmt.Print(c.Render("/p"))
	// Output:
	// app/c.go: 1 introduced
	//   + 6:38 error: not enough arguments in call to calc.Add have (number, number) want (int, int, int) (compiler)
	// checked 2 files (1 edited, 1 dependents); status complete
}
