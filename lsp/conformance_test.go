//go:build linux

package lsp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/lspdiag"
)

// The conformance suite runs real language servers (gopls, pyright,
// typescript-language-server, clangd; `make lsp-servers` installs the
// pinned ones) on a broken and a clean file of their language
// (testdata/conformance/<lang>), from a cold start and after changes: fix
// an error, add one, change nothing (the same text again, and a save).
// Each run is a new Manager, so a new server process: a cold start.
//
// After each step it checks, the moment Settle returns, that the
// diagnostics Drain hands out are exactly the set the server ends up
// publishing (message, severity, 1-based character positions), as seen by
// an independent raw client (conformance_raw_test.go) that runs the same
// steps on its own server process and waits for the server to go quiet for
// several seconds. A clean file is clean only when the server said so: a
// Settle that reports it fresh must rest on a publish (or pull answer) of
// an empty set, and the raw client must have seen the server publish it.
//
// A server that is missing fails the suite; it never skips.

// conformanceRuns is the number of cold starts per server.
const conformanceRuns = 10

// rawQuiet is how long the raw client waits for silence after each step.
const rawQuiet = 3 * time.Second

type confServer struct {
	name   string // the server's name in its configuration
	fixdir string // under testdata/conformance
	lang   string
	broken string
	clean  string
	fixOne func(string) string
	addOne func(string) string
	// start returns the command, its arguments and its environment.
	start func(t *testing.T) (string, []string, []string)
}

func replaceOnce(old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			panic(fmt.Sprintf("fixture has no %q", old))
		}
		return strings.Replace(s, old, new, 1)
	}
}

func appendText(tail string) func(string) string {
	return func(s string) string { return s + tail }
}

// npmServer finds an npm-installed server: $LSP_BIN (make sets it), then
// the repository's tools/lsp.
func npmServer(t *testing.T, name string) string {
	t.Helper()
	var dirs []string
	if d := os.Getenv("LSP_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	if d, err := filepath.Abs(filepath.Join("..", "tools", "lsp", "node_modules", ".bin")); err == nil {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	t.Fatalf("%s not found in %v: run `make lsp-servers` (the pinned versions are in tools/lsp)", name, dirs)
	return ""
}

func conformanceServers() []confServer {
	return []confServer{
		{
			name: "gopls", fixdir: "go", lang: "go", broken: "broken.go", clean: "clean.go",
			fixOne: replaceOnce("undefinedName", `"x"`),
			addOne: appendText("\nvar _ int = \"also wrong\"\n"),
			start: func(t *testing.T) (string, []string, []string) {
				return goplsForTest(t), nil, append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off", "GOFLAGS=-mod=mod")
			},
		},
		{
			name: "pyright", fixdir: "python", lang: "python", broken: "broken.py", clean: "clean.py",
			fixOne: replaceOnce("undefined_name", "name"),
			addOne: appendText("\n\nalso_wrong: int = \"four\"\n"),
			start: func(t *testing.T) (string, []string, []string) {
				return npmServer(t, "pyright-langserver"), []string{"--stdio"}, os.Environ()
			},
		},
		{
			name: "typescript", fixdir: "typescript", lang: "typescript", broken: "broken.ts", clean: "clean.ts",
			fixOne: replaceOnce(" + nowhereDefined", ""),
			addOne: appendText("export const other: number = \"four\";\n"),
			start: func(t *testing.T) (string, []string, []string) {
				return npmServer(t, "typescript-language-server"), []string{"--stdio"}, os.Environ()
			},
		},
		{
			name: "clangd", fixdir: "c", lang: "c", broken: "broken.c", clean: "clean.c",
			fixOne: replaceOnce(" + undefined_name", " + 1"),
			addOne: appendText("int other(void) { return undefined_other; }\n"),
			start: func(t *testing.T) (string, []string, []string) {
				p, err := exec.LookPath("clangd")
				if err != nil {
					t.Fatalf("clangd not found: run `make lsp-servers` (it installs Debian's clangd): %v", err)
				}
				return p, nil, os.Environ()
			},
		},
	}
}

// copyFixture copies testdata/conformance/<name> into a new directory.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", "conformance", name)
	dst := t.TempDir()
	if real, err := filepath.EvalSymlinks(dst); err == nil {
		dst = real
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatalf("conformance fixtures: %v", err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, e.Name()), string(data))
	}
	return dst
}

// The steps, in order.
var confSteps = []string{"cold", "fix-one", "add-one", "nothing"}

// confExpect is what the raw client saw after each step.
type confExpect struct {
	sets map[string]map[string][]string // step -> file -> set
	seen map[string]map[string]bool     // step -> file -> the server published for it
}

// rawConformance runs the steps with the raw client.
func rawConformance(t *testing.T, s confServer, texts map[string]string) confExpect {
	dir := copyFixture(t, s.fixdir)
	cmd, args, env := s.start(t)
	var initOpts []byte
	c := startRawLSP(t, dir, env, initOpts, cmd, args...)
	broken, clean := filepath.Join(dir, s.broken), filepath.Join(dir, s.clean)
	ex := confExpect{sets: map[string]map[string][]string{}, seen: map[string]map[string]bool{}}
	record := func(step string, need []string, before []int) {
		sets, seen := c.settle(t, rawQuiet, 2*time.Minute, need, before, broken, clean)
		ex.sets[step] = map[string][]string{s.broken: sets[broken], s.clean: sets[clean]}
		ex.seen[step] = map[string]bool{s.broken: seen[broken], s.clean: seen[clean]}
	}
	c.open(broken, s.lang, texts["cold"])
	c.open(clean, s.lang, readFixture(t, dir, s.clean))
	record("cold", []string{broken, clean}, []int{0, 0})
	for i, step := range []string{"fix-one", "add-one"} {
		before := c.counts(broken)
		writeFile(t, broken, texts[step])
		c.change(broken, texts[step], i+2)
		record(step, []string{broken}, before)
	}
	writeFile(t, broken, texts["nothing"])
	c.save(broken)
	record("nothing", nil, nil)
	return ex
}

func readFixture(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// confObs is what one run saw for one file after one step.
type confObs struct {
	run       int
	step      string
	file      string
	freshness Freshness
	reason    string
	set       []string // drained right after Settle
	notes     []string
	cleanSaid bool // the registry holds an empty publish or pull for it
	elapsed   time.Duration
	allFresh  bool // every file of the step was fresh
}

// formatDiag writes a diagnostic as the raw client does.
func formatDiag(d *diag.Diagnostic) string {
	return fmt.Sprintf("%d:%d-%d:%d %d %s", d.Range.Start.Line+1, d.Range.Start.Character+1,
		d.Range.End.Line+1, d.Range.End.Character+1, int(d.Severity), d.Message)
}

// managerRun is one cold start of the server under a Manager. It returns
// what it saw, and a channel closed when the manager has shut down (in
// the background, while the next run starts).
func managerRun(t *testing.T, s confServer, dir string, run int, texts map[string]string) ([]confObs, <-chan struct{}) {
	cmd, args, env := s.start(t)
	cfg := NewServerConfig(s.name, cmd, args, map[string]string{filepath.Ext(s.broken): s.lang})
	if s.name == "gopls" {
		cfg = GoplsConfig(cmd, dir)
	}
	cfg.WorkspaceFolder = dir
	// The registry hands out everything, so that each drain after a Reset
	// is the whole current set.
	reg, err := lspdiag.NewRegistry(&lspdiag.RegistryOptions{MaxPerFile: 1000, MaxTotal: 1000})
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, []ServerConfig{cfg}, &ManagerOptions{
		Registry: reg, ProjectDir: dir, Env: env, SettleTimeout: 2 * time.Minute,
		WaitForProgress: run%2 == 1, // both ways of settling, in turn
	})
	runStart := time.Now()
	var steps []string
	shut := make(chan struct{})
	defer func() {
		t.Logf("%s run %d: %s", s.name, run, strings.Join(steps, ", "))
		go func() {
			defer close(shut)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_ = m.Shutdown(ctx)
		}()
	}()
	ctx := context.Background()
	broken, clean := filepath.Join(dir, s.broken), filepath.Join(dir, s.clean)
	writeFile(t, broken, texts["cold"]) // as the fixture has it
	files := []string{broken, clean}
	if run%2 == 1 {
		files = []string{clean, broken}
	}
	var out []confObs
	stepStart := time.Now()
	observe := func(step string) {
		defer func() {
			steps = append(steps, fmt.Sprintf("%s %v", step, time.Since(stepStart).Round(time.Millisecond)))
			stepStart = time.Now()
		}()
		res := map[string]SettleResult{}
		for _, f := range files {
			r, err := m.Settle(ctx, f)
			if err != nil {
				t.Errorf("run %d %s: Settle(%s): %v", run, step, filepath.Base(f), err)
			}
			res[f] = r
		}
		att, _ := m.Drain()
		sets := map[string][]string{}
		var notes []string
		if att != nil {
			for _, fd := range att.Files {
				for i := range fd.Diagnostics {
					sets[fd.Path] = append(sets[fd.Path], formatDiag(&fd.Diagnostics[i]))
				}
			}
			notes = att.Notes
		}
		allFresh := true
		for _, f := range files {
			allFresh = allFresh && res[f].Freshness.Fresh()
		}
		for _, f := range files {
			set := sets[f]
			sort.Strings(set)
			info, ok := reg.LastPublish(s.name, fileuri.FromPath(f))
			out = append(out, confObs{run: run, step: step, file: filepath.Base(f), freshness: res[f].Freshness,
				reason: res[f].Reason, set: set, notes: notes, cleanSaid: ok && info.Count == 0, elapsed: res[f].Elapsed,
				allFresh: allFresh})
		}
	}
	for _, f := range files {
		if err := m.Open(ctx, f); err != nil {
			t.Errorf("run %d: Open(%s): %v", run, filepath.Base(f), err)
			return nil, shut
		}
	}
	observe("cold")
	for _, step := range []string{"fix-one", "add-one"} {
		reg.Reset(fileuri.FromPath(broken)) // the next drain is the whole set
		// As an agent does: write the file, then tell the server.
		writeFile(t, broken, texts[step])
		if err := m.Change(ctx, broken, texts[step]); err != nil {
			t.Error(err)
			return out, shut
		}
		observe(step)
	}
	// Nothing changes: the same text written again (nothing is sent),
	// then a save.
	writeFile(t, broken, texts["nothing"])
	if err := m.Change(ctx, broken, texts["nothing"]); err != nil {
		t.Error(err)
		return out, shut
	}
	if err := m.Save(ctx, broken); err != nil {
		t.Error(err)
		return out, shut
	}
	observe("nothing")
	steps = append(steps, fmt.Sprintf("total %v", time.Since(runStart).Round(time.Millisecond)))
	return out, shut
}

func TestConformance(t *testing.T) {
	var tableMu sync.Mutex
	tables := map[string][]string{}
	servers := conformanceServers()
	t.Cleanup(func() {
		var rows []string
		for _, s := range servers {
			rows = append(rows, tables[s.name]...)
		}
		table := "| server | case | file | Settle said (runs) | exact | the raw client saw |\n|---|---|---|---|---|---|\n" + strings.Join(rows, "\n")
		t.Logf("conformance, %d cold starts per server:\n%s", conformanceRuns, table)
		if p := os.Getenv("CONFORMANCE_TABLE"); p != "" {
			_ = os.WriteFile(p, []byte(table+"\n"), 0o644)
		}
	})
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			dir := copyFixture(t, s.fixdir)
			texts := map[string]string{"cold": readFixture(t, dir, s.broken)}
			texts["fix-one"] = s.fixOne(texts["cold"])
			texts["add-one"] = s.addOne(texts["fix-one"])
			texts["nothing"] = texts["add-one"]

			var ex confExpect
			rawDone := make(chan struct{})
			go func() {
				defer close(rawDone)
				ex = rawConformance(t, s, texts)
			}()
			start := time.Now()
			var obs []confObs
			var prev <-chan struct{}
			for run := range conformanceRuns {
				o, shut := managerRun(t, s, dir, run, texts)
				obs = append(obs, o...)
				if prev != nil {
					<-prev // at most two servers at a time: one working, one stopping
				}
				prev = shut
			}
			<-prev
			t.Logf("%s: %d runs in %v", s.name, conformanceRuns, time.Since(start).Round(time.Millisecond))
			<-rawDone
			if t.Failed() {
				return
			}
			// The server's own behaviour the steps rely on.
			if want := ex.sets["add-one"][s.broken]; fmt.Sprint(ex.sets["nothing"][s.broken]) != fmt.Sprint(want) {
				t.Errorf("raw client: a save changed the set: %v, then %v", want, ex.sets["nothing"][s.broken])
			}
			if len(ex.sets["cold"][s.broken]) != 2 || len(ex.sets["fix-one"][s.broken]) != 1 || len(ex.sets["add-one"][s.broken]) != 2 {
				t.Errorf("raw client: the fixtures do not give 2, 1, 2 errors: %v", ex.sets)
			}
			type key struct{ step, file string }
			agg := map[key]map[string]int{}
			exact := map[key]int{}
			for _, o := range obs {
				k := key{o.step, o.file}
				if agg[k] == nil {
					agg[k] = map[string]int{}
				}
				agg[k][o.freshness.String()]++
				want := ex.sets[o.step][o.file]
				seen := ex.seen[o.step][o.file]
				// "nothing": nothing is new; the set stands as it was.
				wantDrained := want
				if o.step == "nothing" {
					wantDrained = nil
				}
				ok := true
				switch {
				case o.freshness.Fresh() != seen:
					t.Errorf("run %d %s %s: Settle said %v (%s); the raw client saw the server publish for it: %v",
						o.run, o.step, o.file, o.freshness, o.reason, seen)
					ok = false
				case o.freshness.Fresh() && fmt.Sprint(o.set) != fmt.Sprint(wantDrained):
					t.Errorf("run %d %s %s: drained right after Settle (%v, %s, %v):\n  %q\nthe server ends up publishing:\n  %q",
						o.run, o.step, o.file, o.freshness, o.reason, o.elapsed, o.set, wantDrained)
					ok = false
				case o.freshness.Fresh() && len(want) == 0 && !o.cleanSaid:
					t.Errorf("run %d %s %s: reported clean without an empty publish from the server (%s)", o.run, o.step, o.file, o.reason)
					ok = false
				case o.allFresh && len(o.notes) != 0:
					t.Errorf("run %d %s: notes although every file was fresh: %q", o.run, o.step, o.notes)
					ok = false
				}
				if ok {
					exact[k]++
				}
			}
			keys := make([]key, 0, len(agg))
			for k := range agg {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool {
				a, b := keys[i], keys[j]
				ia, ib := stepIndex(a.step), stepIndex(b.step)
				if ia != ib {
					return ia < ib
				}
				return a.file < b.file
			})
			tableMu.Lock()
			defer tableMu.Unlock()
			for _, k := range keys {
				var said []string
				for f, n := range agg[k] {
					said = append(said, fmt.Sprintf("%s %d", f, n))
				}
				sort.Strings(said)
				saw := "no publish"
				if ex.seen[k.step][k.file] {
					switch n := len(ex.sets[k.step][k.file]); n {
					case 0:
						saw = "an empty publish"
					case 1:
						saw = "1 diagnostic"
					default:
						saw = fmt.Sprintf("%d diagnostics", n)
					}
				}
				tables[s.name] = append(tables[s.name], fmt.Sprintf("| %s | %s | %s | %s | %d/%d | %s |", s.name, k.step, k.file,
					strings.Join(said, ", "), exact[k], sum(agg[k]), saw))
			}
		})
	}
}

func stepIndex(step string) int {
	for i, s := range confSteps {
		if s == step {
			return i
		}
	}
	return len(confSteps)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
