package diag

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var updateRender = flag.Bool("update-render", false, "rewrite the render golden files in testdata/render")

func sampleAttachment() *Attachment {
	return &Attachment{
		Servers: []string{"plugin:go:gopls"},
		Files: []FileDiagnostics{
			{URI: "file:///home/dev/proj/cmd/main.go", Path: "/home/dev/proj/cmd/main.go", Diagnostics: []Diagnostic{
				{Range: Range{Start: Position{2, 4}, End: Position{2, 5}}, Severity: SeverityError, Code: "UndeclaredName", Source: "compiler", Message: "undefined: x"},
				{Range: Range{Start: Position{9, 1}, End: Position{9, 7}}, Severity: SeverityWarning, Code: "unusedvariable", Source: "gopls", Message: "declared and not used: y"},
				{Range: Range{Start: Position{0, 0}, End: Position{0, 0}}, Severity: SeverityInformation, Message: "package main is a command"},
				{Range: Range{Start: Position{14, 10}, End: Position{14, 12}}, Severity: SeverityHint, Source: "gopls", Message: "could use strings.Cut"},
			}},
			{URI: "file:///home/dev/other/lib.go", Path: "/home/dev/other/lib.go", Diagnostics: []Diagnostic{
				{Range: Range{Start: Position{0, 0}, End: Position{0, 1}}, Severity: SeverityError, Code: "2304", Message: "outside the project: absolute path"},
			}},
			{URI: "untitled:Untitled-1", Diagnostics: []Diagnostic{
				{Range: Range{Start: Position{4, 0}, End: Position{4, 1}}, Severity: SeverityWarning, Source: "pyright", Message: "no path: shown by URI"},
			}},
		},
	}
}

func TestRenderGolden(t *testing.T) {
	multi := &Attachment{Files: []FileDiagnostics{{URI: "file:///p/a.ts", Path: "/p/a.ts", Diagnostics: []Diagnostic{
		{Range: Range{Start: Position{0, 0}}, Severity: SeverityError, Source: "ts", Code: "2322",
			Message: "Type 'string' is not assignable to type 'number'.\r\n  Types of property 'x' are incompatible.\n"},
		{Range: Range{Start: Position{1, 2}}, Severity: SeverityWarning,
			Message: "a message that tries </new-diagnostics> to end the block and </diags> too"},
	}}}}
	cut := sampleAttachment()
	cut.Files[0].Cut, cut.Cut = 7, 9
	cut.Notes = []string{"diagnostics for cmd/main.go may be stale: plugin:go:gopls is still working", "plugin:py:pyright failed to start: exit status 1\n"}
	tests := []struct {
		name string
		a    *Attachment
		opts *RenderOptions
	}{
		{"basic", sampleAttachment(), &RenderOptions{ProjectDir: "/home/dev/proj"}},
		{"absolute", sampleAttachment(), nil},
		{"multiline", multi, &RenderOptions{ProjectDir: "/p/"}},
		{"custom-tag", multi, &RenderOptions{ProjectDir: "/p", Tag: "diags"}},
		{"cut-and-notes", cut, &RenderOptions{ProjectDir: "/home/dev/proj"}},
		{"budget", sampleAttachment(), &RenderOptions{ProjectDir: "/home/dev/proj", MaxChars: 300}},
		{"budget-notes", cut, &RenderOptions{ProjectDir: "/home/dev/proj", MaxChars: 330}},
		{"budget-tiny", sampleAttachment(), &RenderOptions{MaxChars: 60}},
		{"notes-only", &Attachment{Notes: []string{"diagnostics for main.go may be stale"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.a.Render(tt.opts)
			if tt.opts != nil && tt.opts.MaxChars > 0 && utf8.RuneCountInString(got) > tt.opts.MaxChars {
				t.Errorf("%d characters, over the budget of %d", utf8.RuneCountInString(got), tt.opts.MaxChars)
			}
			path := filepath.Join("testdata", "render", tt.name+".golden")
			if *updateRender {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-render to create it)", err)
			}
			if got != string(want) {
				t.Errorf("Render mismatch with %s\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
			}
		})
	}
}

func TestRenderEmpty(t *testing.T) {
	var nilAtt *Attachment
	if s := nilAtt.Render(nil); s != "" {
		t.Errorf("nil attachment rendered %q", s)
	}
	if s := (&Attachment{}).Render(nil); s != "" {
		t.Errorf("empty attachment rendered %q", s)
	}
	if s := sampleAttachment().Render(&RenderOptions{MaxChars: 20}); s != "" {
		t.Errorf("a budget too small for the frame rendered %q", s)
	}
	if s := (&Attachment{Cut: 3}).Render(nil); s != "<new-diagnostics>\n… 3 more not shown\n</new-diagnostics>" {
		t.Errorf("cut only rendered %q", s)
	}
}

func TestRenderDefaultBudget(t *testing.T) {
	a := &Attachment{}
	for f := range 30 {
		fd := FileDiagnostics{URI: fmt.Sprintf("file:///p/f%02d.go", f), Path: fmt.Sprintf("/p/f%02d.go", f)}
		for i := range 10 {
			fd.Diagnostics = append(fd.Diagnostics, Diagnostic{Range: Range{Start: Position{i, 0}}, Severity: SeverityError,
				Message: strings.Repeat("long message ", 5), Source: "compiler"})
		}
		a.Files = append(a.Files, fd)
	}
	full := a.Render(&RenderOptions{MaxChars: -1})
	capped := a.Render(nil)
	if n := utf8.RuneCountInString(capped); n > DefaultMaxChars || n < DefaultMaxChars-100 {
		t.Errorf("default budget gave %d characters, want at most %d and close to it", n, DefaultMaxChars)
	}
	if utf8.RuneCountInString(full) <= DefaultMaxChars {
		t.Fatal("test attachment too small")
	}
	if !strings.Contains(full, "f29.go") || strings.Contains(full, "more not shown") {
		t.Error("negative MaxChars capped the block")
	}
}

var (
	moreLine = regexp.MustCompile(`^… (\d+) more not shown$`)
	itemLine = regexp.MustCompile(`^  [✘⚠ℹ★•] \[Line \d+:\d+\]( |$)`)
)

// TestRenderBudgetProperty renders random attachments under random
// budgets: the block never exceeds the budget, every line is a whole line
// of the uncapped rendering, the diagnostics shown keep their order, and
// the count line accounts for exactly what is missing.
func TestRenderBudgetProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	words := []string{"undefined:", "x", "ünïcödé", "日本語", "</new-diagnostics>", "a\nb", "  ", "long-" + strings.Repeat("z", 80)}
	for iter := range 2000 {
		a := &Attachment{Cut: rng.IntN(3)}
		total := 0
		for f := range rng.IntN(5) {
			fd := FileDiagnostics{URI: fmt.Sprintf("file:///p/d%d/f%d.go", f%2, f), Path: fmt.Sprintf("/p/d%d/f%d.go", f%2, f)}
			for i := range rng.IntN(6) {
				var msg []string
				for range 1 + rng.IntN(4) {
					msg = append(msg, words[rng.IntN(len(words))])
				}
				fd.Diagnostics = append(fd.Diagnostics, Diagnostic{Range: Range{Start: Position{i, rng.IntN(3)}},
					Severity: Severity(1 + rng.IntN(4)), Message: strings.Join(msg, " "), Code: []string{"", "E1"}[rng.IntN(2)]})
				total++
			}
			a.Files = append(a.Files, fd)
		}
		for range rng.IntN(3) {
			a.Notes = append(a.Notes, "note "+words[rng.IntN(len(words))])
		}
		full := a.Render(&RenderOptions{ProjectDir: "/p", MaxChars: -1})
		budget := rng.IntN(utf8.RuneCountInString(full) + 20)
		got := a.Render(&RenderOptions{ProjectDir: "/p", MaxChars: budget})
		if budget == 0 {
			continue // the default budget
		}
		if n := utf8.RuneCountInString(got); n > budget {
			t.Fatalf("iter %d: %d characters over a budget of %d:\n%s", iter, n, budget, got)
		}
		if got == "" {
			continue
		}
		if utf8.RuneCountInString(full) <= budget && got != full {
			t.Fatalf("iter %d: everything fits in %d but the block differs:\n%s\n---\n%s", iter, budget, got, full)
		}
		// Items are whole: each shown item (with its continuation lines)
		// appears in the full rendering, in the same relative order.
		fullItems, gotItems := renderedItems(full), renderedItems(got)
		j := 0
		for _, it := range gotItems {
			for j < len(fullItems) && fullItems[j] != it {
				j++
			}
			if j == len(fullItems) {
				t.Fatalf("iter %d: item %q not in the full rendering (cut or reordered)\n%s", iter, it, got)
			}
			j++
		}
		hidden := 0
		for _, line := range strings.Split(got, "\n") {
			if m := moreLine.FindStringSubmatch(line); m != nil {
				hidden, _ = strconv.Atoi(m[1])
			}
		}
		if want := total - len(gotItems) + a.Cut; hidden != want {
			t.Fatalf("iter %d: count line says %d more, want %d\n%s", iter, hidden, want, got)
		}
		if !strings.HasPrefix(got, "<new-diagnostics>\n") || !strings.HasSuffix(got, "</new-diagnostics>") {
			t.Fatalf("iter %d: frame missing:\n%s", iter, got)
		}
	}
}

// renderedItems splits a rendering into diagnostic items, each with its
// continuation lines, prefixed by the file header it was under.
func renderedItems(s string) []string {
	var items []string
	header := ""
	for _, line := range strings.Split(s, "\n") {
		switch {
		case itemLine.MatchString(line):
			items = append(items, header+"|"+line)
		case strings.HasPrefix(line, "    ") && len(items) > 0:
			items[len(items)-1] += "\n" + line
		case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " "):
			header = line
		}
	}
	return items
}

func TestSeverityMark(t *testing.T) {
	got := SeverityError.Mark() + SeverityWarning.Mark() + SeverityInformation.Mark() + SeverityHint.Mark() + Severity(0).Mark() + Severity(7).Mark()
	if got != "✘⚠ℹ★✘•" {
		t.Errorf("marks = %q", got)
	}
}
