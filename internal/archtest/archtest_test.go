package archtest

import (
	"context"
	"errors"
	"fmt"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

const module = "github.com/idebridge/idebridge"

// library are the packages agents import. The entry points (cabi, cmd,
// fuzz, benchmarks) may use these and nothing else of the module.
var library = []string{
	"lockfile", "pathconv", "diag", "mcp", "mcpclient",
	"idebridge", "idebridge/ideserver", "lspdiag", "lsp", "mcpserver", "warm",
}

// layer is one box of ARCHITECTURE.md's drawing: what its packages may
// import. A package belongs to the layer of its nearest ancestor directory
// that has one (internal/env is in "internal", mcpclient/x would be in
// "mcpclient"); packages of one layer may import each other.
type layer struct {
	// uses are the module packages (relative paths; "internal" is the
	// whole internal/ tree) that the layer's code may import.
	uses []string
	// thirdParty are the module paths outside the standard library that
	// its code may import.
	thirdParty []string
	// testsToo holds the layer's tests to the same uses: the entry points
	// reach the library through its exported API, tests included (fuzz
	// has no code but its tests). Other layers' tests may import any
	// library or internal package, to test with real parts.
	testsToo bool
}

const (
	gorilla  = "github.com/gorilla/websocket"
	lru      = "github.com/hashicorp/golang-lru/v2"
	jsonrpc2 = "github.com/sourcegraph/jsonrpc2"
	xtext    = "golang.org/x/text"
	gocmp    = "github.com/google/go-cmp"
)

// testThirdParty may be imported by any test: the library's third-party
// modules (a test may drive a real WebSocket, say) and go-cmp. Anything
// else needs a reason, and an entry here.
var testThirdParty = []string{gorilla, lru, jsonrpc2, xtext, gocmp}

var layers = map[string]layer{
	// Shared internals: the standard library only.
	"internal": {},
	// Leaves.
	"lockfile": {uses: []string{"internal"}, thirdParty: []string{xtext}},
	"pathconv": {uses: []string{"internal"}},
	"diag":     {uses: []string{"internal"}},
	"mcp":      {uses: []string{"internal"}},
	// The MCP client.
	"mcpclient": {uses: []string{"mcp", "internal"}, thirdParty: []string{gorilla}},
	// The IDE path: never lspdiag, lsp or jsonrpc2.
	"idebridge": {uses: []string{"lockfile", "pathconv", "diag", "mcp", "mcpclient", "internal"}, thirdParty: []string{gorilla}},
	// The IDE side, whose getDiagnostics may come from language servers.
	"idebridge/ideserver": {uses: []string{"lockfile", "pathconv", "diag", "mcp", "lspdiag", "lsp", "internal"}, thirdParty: []string{gorilla}},
	// The LSP path: never the IDE packages.
	"lspdiag": {uses: []string{"diag", "internal"}, thirdParty: []string{lru}},
	"lsp":     {uses: []string{"diag", "lspdiag", "internal"}, thirdParty: []string{jsonrpc2, lru}},
	// The MCP server over both paths: above them, below the entry points.
	"mcpserver": {uses: []string{"idebridge", "idebridge/ideserver", "lsp", "lspdiag", "lockfile", "pathconv", "diag", "mcp", "mcpclient", "internal"}},
	// The shared runtime: serves mcpserver to every client of the user.
	"warm": {uses: []string{"mcpserver", "idebridge/ideserver", "lsp", "lspdiag", "diag", "mcp", "internal"}},
	// Entry points: the exported API; nothing imports them.
	"cabi": {uses: library, testsToo: true},
	"cmd":  {uses: library, testsToo: true},
	// fuzz/jsonrpc_test.go fuzzes the JSON-RPC decoder shared by both
	// sides, which is internal; it leaves with the MCP split.
	"fuzz": {uses: append(slices.Clone(library), "internal/jsonrpc"), testsToo: true},
}

// importSite is one import in one file.
type importSite struct {
	path string // as written
	pos  string // file:line, for messages
}

// pkgImports are the imports of one package directory, over every file
// whatever its build constraints.
type pkgImports struct {
	code, tests []importSite
}

// layerOf returns the layer key of a module package (a path relative to
// the module root), or "" when the drawing has none.
func layerOf(rel string) string {
	for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if _, ok := layers[p]; ok {
			return p
		}
	}
	return ""
}

// inTree reports whether rel is key or below it.
func inTree(rel, key string) bool { return rel == key || strings.HasPrefix(rel, key+"/") }

func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// check returns every import of pkgs that the drawing forbids, one
// message each, sorted.
func check(pkgs map[string]*pkgImports) []string {
	var bad []string
	for rel, imps := range pkgs {
		key := layerOf(rel)
		if key == "" {
			bad = append(bad, fmt.Sprintf("package %s is not in the drawing: add it to ARCHITECTURE.md and to the layers of %s", rel, "internal/archtest"))
			continue
		}
		l := layers[key]
		for _, site := range imps.code {
			if why := forbidden(key, l, site.path, false); why != "" {
				bad = append(bad, fmt.Sprintf("%s: %s imports %s: %s", site.pos, rel, site.path, why))
			}
		}
		for _, site := range imps.tests {
			if why := forbidden(key, l, site.path, true); why != "" {
				bad = append(bad, fmt.Sprintf("%s: a test of %s imports %s: %s", site.pos, rel, site.path, why))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// forbidden says why a package of layer key may not import path, or "".
func forbidden(key string, l layer, path string, test bool) string {
	switch {
	case path == "C" || isStd(path):
		return ""
	case path == module || strings.HasPrefix(path, module+"/"):
		target := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if inTree(target, key) && layerOf(target) == key {
			return "" // the layer's own packages
		}
		if test && !l.testsToo {
			for _, entry := range []string{"cabi", "cmd", "fuzz", "benchmarks"} {
				if inTree(target, entry) {
					return "nothing imports " + entry
				}
			}
			if slices.Contains(library, target) || inTree(target, "internal") {
				return ""
			}
			return "not a library package"
		}
		for _, u := range l.uses {
			if u == target || u == "internal" && inTree(target, "internal") {
				return ""
			}
		}
		return fmt.Sprintf("%s may use only %v of this module", key, l.uses)
	default:
		allowed := l.thirdParty
		if test {
			allowed = append(slices.Clone(allowed), testThirdParty...)
		}
		for _, m := range allowed {
			if inTree(path, m) {
				return ""
			}
		}
		return fmt.Sprintf("%s may import only %v from outside the standard library", key, allowed)
	}
}

// moduleRoot returns the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if strings.HasPrefix(string(data), "module "+module+"\n") {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of %s above the working directory", module)
		}
		dir = parent
	}
}

// parseTree reads the imports of every Go file under root, by package
// directory relative to root, as the go command would find its packages:
// testdata, directories starting with "." or "_", and nested modules are
// skipped; so are files constrained to "ignore".
func parseTree(t *testing.T, root string) map[string]*pkgImports {
	t.Helper()
	pkgs := map[string]*pkgImports{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); p != root && err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		for _, cg := range f.Comments {
			if cg.Pos() > f.Package {
				break
			}
			for _, c := range cg.List {
				if expr, err := constraint.Parse(c.Text); err == nil && expr.String() == "ignore" {
					return nil
				}
			}
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		imps := pkgs[rel]
		if imps == nil {
			imps = &pkgImports{}
			pkgs[rel] = imps
		}
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			pos := fset.Position(spec.Pos())
			fileRel, _ := filepath.Rel(root, pos.Filename)
			site := importSite{path: path, pos: fmt.Sprintf("%s:%d", filepath.ToSlash(fileRel), pos.Line)}
			if strings.HasSuffix(p, "_test.go") {
				imps.tests = append(imps.tests, site)
			} else {
				imps.code = append(imps.code, site)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the module's imports: %v", err)
	}
	return pkgs
}

// TestArrows fails on every import in the module that ARCHITECTURE.md's
// drawing forbids.
func TestArrows(t *testing.T) {
	pkgs := parseTree(t, moduleRoot(t))
	for _, want := range []string{"lockfile", "pathconv", "diag", "idebridge", "idebridge/ideserver", "lspdiag", "lsp", "mcpserver", "internal/env", "cabi", "cmd/idebridge", "fuzz"} {
		if pkgs[want] == nil || len(pkgs[want].code)+len(pkgs[want].tests) == 0 {
			t.Errorf("package %s was not read: the walk missed it", want)
		}
	}
	for _, msg := range check(pkgs) {
		t.Error(msg)
	}
}

// TestBenchmarksUseTheExportedAPI: the benchmarks module (its own go.mod)
// reaches the library through its exported API only.
func TestBenchmarksUseTheExportedAPI(t *testing.T) {
	root := filepath.Join(moduleRoot(t), "benchmarks")
	pkgs := parseTree(t, root)
	if len(pkgs) == 0 {
		t.Fatalf("no packages read under %s", root)
	}
	for rel, imps := range pkgs {
		for _, site := range append(slices.Clone(imps.code), imps.tests...) {
			if !strings.HasPrefix(site.path, module+"/") || strings.HasPrefix(site.path, module+"/benchmarks") {
				continue
			}
			target := strings.TrimPrefix(site.path, module+"/")
			if !slices.Contains(library, target) {
				t.Errorf("benchmarks/%s: benchmarks/%s imports %s: benchmarks may use only %v", site.pos, rel, site.path, library)
			}
		}
	}
}

// TestRulesCatchForbiddenArrows feeds check imports that break each rule,
// so that TestArrows passing means something.
func TestRulesCatchForbiddenArrows(t *testing.T) {
	m := func(rel string) string { return module + "/" + rel }
	at := func(paths ...string) []importSite {
		var out []importSite
		for _, p := range paths {
			out = append(out, importSite{path: p, pos: "x.go:1"})
		}
		return out
	}
	bad := map[string]map[string]*pkgImports{
		"idebridge uses lsp":           {"idebridge": {code: at(m("lsp"))}},
		"idebridge uses lspdiag":       {"idebridge": {code: at(m("lspdiag"))}},
		"idebridge uses jsonrpc2":      {"idebridge": {code: at(jsonrpc2)}},
		"idebridge uses ideserver":     {"idebridge": {code: at(m("idebridge/ideserver"))}},
		"diag uses a third party":      {"diag": {code: at(gorilla)}},
		"diag uses lockfile":           {"diag": {code: at(m("lockfile"))}},
		"mcp uses mcpclient":           {"mcp": {code: at(m("mcpclient"))}},
		"lspdiag uses lsp":             {"lspdiag": {code: at(m("lspdiag"), m("lsp"))}},
		"lsp uses idebridge":           {"lsp": {code: at(m("idebridge"))}},
		"lockfile uses cabi":           {"lockfile": {code: at(m("cabi"))}},
		"a test imports fuzz":          {"lsp": {tests: at(m("fuzz"))}},
		"a test imports cmd":           {"idebridge": {tests: at(m("cmd/idebridge"))}},
		"cmd uses internal":            {"cmd/idebridge": {code: at(m("internal/env"))}},
		"a cabi test uses internal":    {"cabi": {tests: at(m("internal/fileuri"))}},
		"internal uses the library":    {"internal/env": {code: at(m("diag"))}},
		"a package not in the drawing": {"nav": {code: at("fmt")}},
		"a test's unknown third party": {"lsp": {tests: at("example.com/mock")}},
		"cmd uses a third party":       {"cmd/idebridge": {code: at(gorilla)}},
		"lsp uses mcpserver":           {"lsp": {code: at(m("mcpserver"))}},
		"ideserver uses mcpserver":     {"idebridge/ideserver": {code: at(m("mcpserver"))}},
		"mcpserver uses cmd":           {"mcpserver": {code: at(m("cmd/idebridge"))}},
	}
	for name, pkgs := range bad {
		if got := check(pkgs); len(got) != 1 {
			t.Errorf("%s: check reported %q, want one violation", name, got)
		}
	}
	good := map[string]*pkgImports{
		"idebridge":           {code: at("context", m("lockfile"), m("mcpclient"), m("internal/env"), gorilla), tests: at(m("idebridge/ideserver"), m("lsp"), gocmp+"/cmp")},
		"idebridge/ideserver": {code: at(m("lsp"), m("lspdiag"), m("diag"))},
		"mcpclient/sse":       {code: at(m("mcpclient"), m("mcp"))},
		"internal/jsonrpc":    {code: at(m("internal/env"))},
		"cabi":                {code: at("C", m("cabi/abispec"), m("lsp"), m("idebridge"))},
		"cabi/gen":            {code: at(m("cabi/abispec"))},
		"lockfile":            {code: at(xtext + "/unicode/norm")},
		"lsp":                 {code: at(jsonrpc2, lru+"/simplelru", m("lspdiag"))},
		"mcpserver":           {code: at(m("idebridge"), m("idebridge/ideserver"), m("lsp"), m("internal/safefile"))},
	}
	if got := check(good); len(got) != 0 {
		t.Errorf("allowed arrows reported: %q", got)
	}
}

// goCommand returns the go command; go test puts the one that runs the
// test first in PATH.
func goCommand(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	return p
}

// TestBuildGraph asks the go command for the dependencies that the
// packages which must stay small really link: an agent that only wants
// its IDE must not link a language-server supervisor.
func TestBuildGraph(t *testing.T) {
	root := moduleRoot(t)
	goBin := goCommand(t)
	onlyInternal := func(extra ...string) func(dep string) string {
		return func(dep string) string {
			if inTree(dep, module+"/internal") {
				return ""
			}
			for _, e := range extra {
				if inTree(dep, e) {
					return ""
				}
			}
			return "only the standard library and internal/ are allowed"
		}
	}
	noLSP := func(dep string) string {
		for _, f := range []string{module + "/lsp", module + "/lspdiag", jsonrpc2} {
			if inTree(dep, f) {
				return "the IDE path must not link the LSP path"
			}
		}
		return ""
	}
	rules := map[string]func(dep string) string{
		"idebridge": noLSP,
		"mcpclient": noLSP,
		"mcp":       onlyInternal(),
		"diag":      onlyInternal(),
		"pathconv":  onlyInternal(),
		"lockfile":  onlyInternal(xtext),
	}
	checked := 0
	for pkg, rule := range rules {
		if _, err := os.Stat(filepath.Join(root, pkg)); err != nil {
			continue // not split out yet: the rule applies once it exists
		}
		checked++
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./"+pkg)
		cmd.Dir = root
		out, err := cmd.Output()
		cancel()
		if err != nil {
			var stderr string
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("go list -deps ./%s: %v\n%s", pkg, err, stderr)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, module+"/"+pkg) {
			t.Fatalf("go list -deps ./%s did not list the package itself: %q", pkg, deps)
		}
		for _, dep := range deps {
			if dep == module+"/"+pkg {
				continue
			}
			if why := rule(dep); why != "" {
				t.Errorf("%s depends on %s: %s", pkg, dep, why)
			}
		}
	}
	if checked < 4 {
		t.Errorf("only %d of the packages to check exist", checked)
	}
}

// TestDrawingNamesEveryLayer: every part of the module that exists is in
// ARCHITECTURE.md.
func TestDrawingNamesEveryLayer(t *testing.T) {
	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := parseTree(t, root)
	for rel := range pkgs {
		key := layerOf(rel)
		if key == "" {
			continue // TestArrows reports it
		}
		if !strings.Contains(string(doc), "`"+key) {
			t.Errorf("ARCHITECTURE.md does not name %s (the layer of %s)", key, rel)
		}
	}
	if !strings.Contains(string(doc), "`benchmarks") {
		t.Error("ARCHITECTURE.md does not name benchmarks")
	}
}
