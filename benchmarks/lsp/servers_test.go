package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/lspdiag"
	"github.com/sourcegraph/jsonrpc2"
)

// BenchmarkSettleVsServer measures, for each server of the conformance
// suite (gopls, pyright, typescript-language-server, clangd) on its broken
// fixture, how long Settle takes against how long the server itself takes,
// in the same run:
//
//   - cold: a new server; from Open to Settle's return, against the time
//     from starting a raw client's server to the arrival of the publish
//     that carries the file's final set;
//   - change: a warm server; from Change to Settle's return, against the
//     time from a raw client's didChange to the arrival of the final set
//     for that text.
//
// The final sets come from a calibration run of the raw client that waits
// for several seconds of quiet after each step. For pyright, which serves
// pull diagnostics to a client that offers them (lspdiag does, and pyright
// then publishes nothing), the raw client pulls right after each message
// and the answer's arrival is the server's time. An early return is a
// Settle after which the drained set is not the final set. Lspdiag and the
// raw client take turns (alternating who goes first), each with its own
// server process, with the same initializationOptions (gopls's
// verboseWorkDoneProgress).
func BenchmarkSettleVsServer(b *testing.B) {
	for _, s := range benchServers() {
		if !benchWanted(s) {
			continue
		}
		b.Run(s.name+"/cold", func(b *testing.B) { benchCold(b, s) })
		b.Run(s.name+"/change", func(b *testing.B) { benchChange(b, s) })
	}
}

type benchServer struct {
	name, fixdir, lang, broken string
	// pull: the server serves pull diagnostics to a client that offers
	// them, as lspdiag does (pyright then publishes nothing): the raw
	// client pulls too, and the answer is the server's time.
	pull   bool
	change func(string) string // the other text changes alternate with
	start  func(tb testing.TB) (cmd string, args, env []string)
	config func(cmd string, args []string, dir string) lsp.ServerConfig
	// extended: a server of the extended conformance suite
	// (TestConformanceServers), run only when IDEBRIDGE_BENCH_SERVERS
	// names it or is "all".
	extended bool
}

func npmServer(tb testing.TB, name string) string {
	tb.Helper()
	var dirs []string
	if d := os.Getenv("LSP_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	if d, err := filepath.Abs(filepath.Join("..", "..", "tools", "lsp", "node_modules", ".bin")); err == nil {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
	}
	tb.Fatalf("%s not found in %v: run `make lsp-servers`", name, dirs)
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func benchServers() []benchServer {
	plain := func(name, ext, lang string) func(string, []string, string) lsp.ServerConfig {
		return func(cmd string, args []string, dir string) lsp.ServerConfig {
			c := lsp.NewServerConfig(name, cmd, args, map[string]string{ext: lang})
			c.WorkspaceFolder = dir
			return c
		}
	}
	return []benchServer{
		{name: "gopls", fixdir: "go", lang: "go", broken: "broken.go",
			change: func(s string) string { return strings.Replace(s, "undefinedName", `"x"`, 1) },
			start: func(tb testing.TB) (string, []string, []string) {
				return gopls(tb), nil, environ(tb)
			},
			config: func(cmd string, _ []string, dir string) lsp.ServerConfig { return lsp.GoplsConfig(cmd, dir) }},
		{name: "pyright", fixdir: "python", lang: "python", broken: "broken.py", pull: true,
			change: func(s string) string { return strings.Replace(s, "undefined_name", "name", 1) },
			start: func(tb testing.TB) (string, []string, []string) {
				return npmServer(tb, "pyright-langserver"), []string{"--stdio"}, os.Environ()
			},
			config: plain("pyright", ".py", "python")},
		{name: "typescript", fixdir: "typescript", lang: "typescript", broken: "broken.ts",
			change: func(s string) string { return strings.Replace(s, " + nowhereDefined", "", 1) },
			start: func(tb testing.TB) (string, []string, []string) {
				return npmServer(tb, "typescript-language-server"), []string{"--stdio"}, os.Environ()
			},
			config: plain("typescript", ".ts", "typescript")},
		{name: "clangd", fixdir: "c", lang: "c", broken: "broken.c",
			change: func(s string) string { return strings.Replace(s, " + undefined_name", " + 1", 1) },
			start: func(tb testing.TB) (string, []string, []string) {
				p, err := exec.LookPath("clangd")
				if err != nil {
					tb.Fatalf("clangd not found: run `make lsp-servers`: %v", err)
				}
				return p, nil, os.Environ()
			},
			config: plain("clangd", ".c", "c")},
		{name: "pylsp", fixdir: "pylsp", lang: "python", broken: "broken.py", extended: true,
			change: func(s string) string { return strings.Replace(s, " + other_missing", "", 1) },
			start: func(tb testing.TB) (string, []string, []string) {
				p, err := exec.LookPath("pylsp")
				if err != nil {
					tb.Fatalf("pylsp not found: run `make lsp-servers`: %v", err)
				}
				return p, nil, os.Environ()
			},
			config: plain("pylsp", ".py", "python")},
		{name: "bash", fixdir: "bash", lang: "shellscript", broken: "broken.sh", extended: true,
			change: func(s string) string { return strings.Replace(s, "echo $name", `echo "$name"`, 1) },
			start: func(tb testing.TB) (string, []string, []string) {
				if _, err := exec.LookPath("shellcheck"); err != nil {
					tb.Fatalf("shellcheck not found: run `make lsp-servers`: %v", err)
				}
				return npmServer(tb, "bash-language-server"), []string{"start"}, os.Environ()
			},
			config: plain("bash", ".sh", "shellscript")},
		{name: "yaml", fixdir: "yaml", lang: "yaml", broken: "broken.yaml", extended: true,
			change: func(s string) string { return strings.Replace(s, "name: second\n", "", 1) },
			start: func(tb testing.TB) (string, []string, []string) {
				return npmServer(tb, "yaml-language-server"), []string{"--stdio"}, os.Environ()
			},
			config: plain("yaml", ".yaml", "yaml")},
		// json, css and html serve pull diagnostics to a client that
		// offers them (lsp does): the raw client pulls too.
		{name: "json", fixdir: "json", lang: "json", broken: "broken.json", extended: true, pull: true,
			change: func(s string) string { return strings.Replace(s, `"a": 1,,`, `"a": 1,`, 1) },
			start: func(tb testing.TB) (string, []string, []string) {
				return npmServer(tb, "vscode-json-language-server"), []string{"--stdio"}, os.Environ()
			},
			config: withOptions(plain("json", ".json", "json"), `{"provideFormatter": false}`, "")},
		{name: "css", fixdir: "css", lang: "css", broken: "broken.css", extended: true, pull: true,
			change: func(s string) string { return strings.Replace(s, "colr: blue;", "color: blue;", 1) },
			start: func(tb testing.TB) (string, []string, []string) {
				return npmServer(tb, "vscode-css-language-server"), []string{"--stdio"}, os.Environ()
			},
			// Its section as an object, as VS Code sends it: with null it
			// validates nothing (docs/LSP-SERVERS.md).
			config: withOptions(plain("css", ".css", "css"), `{"provideFormatter": false}`, `{"css": {}}`)},
		{name: "html", fixdir: "html", lang: "html", broken: "broken.html", extended: true, pull: true,
			change: func(s string) string { return strings.Replace(s, "colr: red;", "color: red;", 1) },
			start: func(tb testing.TB) (string, []string, []string) {
				return npmServer(tb, "vscode-html-language-server"), []string{"--stdio"}, os.Environ()
			},
			config: withOptions(plain("html", ".html", "html"),
				`{"provideFormatter": false, "embeddedLanguages": {"css": true, "javascript": true}}`,
				`{"html": {}, "css": {}, "javascript": {}}`)},
	}
}

// withOptions sets a configuration's initializationOptions and settings
// (JSON; "" for none).
func withOptions(f func(string, []string, string) lsp.ServerConfig, initOpts, settings string) func(string, []string, string) lsp.ServerConfig {
	return func(cmd string, args []string, dir string) lsp.ServerConfig {
		c := f(cmd, args, dir)
		if initOpts != "" {
			c.InitializationOptions = json.RawMessage(initOpts)
		}
		if settings != "" {
			c.Settings = json.RawMessage(settings)
		}
		return c
	}
}

// benchWanted says whether BenchmarkSettleVsServer runs s: the four
// servers of the conformance suite always; the extended suite's when
// IDEBRIDGE_BENCH_SERVERS names them (comma-separated) or is "all".
// IDEBRIDGE_BENCH_SERVERS also narrows the four.
func benchWanted(s benchServer) bool {
	only := os.Getenv("IDEBRIDGE_BENCH_SERVERS")
	if only == "" || only == "all" {
		return only == "all" || !s.extended
	}
	for _, n := range strings.Split(only, ",") {
		if strings.TrimSpace(n) == s.name {
			return true
		}
	}
	return false
}

// fixture copies lsp/testdata/conformance/<name> into a new directory.
func fixture(tb testing.TB, name string) string {
	tb.Helper()
	return copyTestdata(tb, "conformance", name)
}

// copyTestdata copies the files of the lsp package's testdata/<elem...>
// into a fresh directory (its real path, symlinks resolved) and returns it.
func copyTestdata(tb testing.TB, elem ...string) string {
	tb.Helper()
	src := filepath.Join(append([]string{"..", "..", "lsp", "testdata"}, elem...)...)
	dst := tb.TempDir()
	if real, err := filepath.EvalSymlinks(dst); err == nil {
		dst = real
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dst
}

// anyServer is a raw client for any server: it records every publish of
// the document it opened, with its arrival time, normalized as the
// conformance suite does (1-based character positions).
type anyServer struct {
	cmd      *exec.Cmd
	conn     *jsonrpc2.Conn
	dir      string
	pull     bool
	settings map[string]json.RawMessage // sections answered to workspace/configuration

	mu    sync.Mutex
	text  string
	pubs  []rawPub
	wake  chan struct{}
	start time.Time
}

type rawPub struct {
	at      time.Time
	version *int
	set     string
}

func startAny(tb testing.TB, dir string, pull bool, cfg lsp.ServerConfig, cmd string, args, env []string) *anyServer {
	tb.Helper()
	initOpts := cfg.InitializationOptions
	c := &anyServer{cmd: exec.Command(cmd, args...), dir: dir, pull: pull, wake: make(chan struct{}, 1), start: time.Now()}
	if len(cfg.Settings) > 0 {
		if err := json.Unmarshal(cfg.Settings, &c.settings); err != nil {
			tb.Fatalf("settings: %v", err)
		}
	}
	c.cmd.Dir, c.cmd.Env = dir, env
	ownProcessGroup(c.cmd)
	in, err := c.cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c.conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(stdio{out, in}, jsonrpc2.VSCodeObjectCodec{}),
		jsonrpc2.HandlerWithError(c.handle), jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	td := map[string]any{"publishDiagnostics": map[string]any{"versionSupport": true}}
	if pull {
		td["diagnostic"] = map[string]any{"dynamicRegistration": true}
	}
	err = c.conn.Call(ctx, "initialize", map[string]any{
		"processId": os.Getpid(), "rootUri": fileURI(dir),
		"capabilities": map[string]any{
			"textDocument": td,
			"workspace":    map[string]any{"configuration": true, "workspaceFolders": true},
			"window":       map[string]any{"workDoneProgress": true},
		},
		"workspaceFolders":      []map[string]string{{"uri": fileURI(dir), "name": "bench"}},
		"initializationOptions": initOpts,
	}, nil)
	if err == nil {
		err = c.conn.Notify(ctx, "initialized", struct{}{})
	}
	if err == nil && len(cfg.Settings) > 0 {
		err = c.conn.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": cfg.Settings})
	}
	if err != nil {
		c.close()
		tb.Fatalf("initializing %s: %v", cmd, err)
	}
	return c
}

func (c *anyServer) handle(_ context.Context, _ *jsonrpc2.Conn, r *jsonrpc2.Request) (any, error) {
	switch r.Method {
	case "textDocument/publishDiagnostics":
		var p struct {
			Version     *int      `json:"version"`
			Diagnostics []rawDiag `json:"diagnostics"`
		}
		if r.Params == nil || json.Unmarshal(*r.Params, &p) != nil {
			return nil, nil
		}
		c.record(time.Now(), p.Version, p.Diagnostics)
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		if r.Params != nil {
			_ = json.Unmarshal(*r.Params, &p)
		}
		// What lsp answers too: the section from the settings, null for
		// a section they do not set.
		out := make([]any, len(p.Items))
		for i, it := range p.Items {
			if v, ok := c.settings[it.Section]; ok {
				out[i] = v
			}
		}
		return out, nil
	case "workspace/workspaceFolders":
		return []map[string]string{{"uri": fileURI(c.dir), "name": "bench"}}, nil
	}
	return nil, nil
}

type rawDiag struct {
	Range struct {
		Start struct{ Line, Character int } `json:"start"`
		End   struct{ Line, Character int } `json:"end"`
	} `json:"range"`
	Severity int    `json:"severity"`
	Message  string `json:"message"`
}

// record keeps a publish or a pull answer, arrived at now.
func (c *anyServer) record(now time.Time, version *int, diags []rawDiag) {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := strings.Split(c.text, "\n")
	col := func(line, units int) int {
		if line >= len(lines) {
			return units + 1
		}
		n, u := 0, 0
		for _, r := range lines[line] {
			w := len(utf16.Encode([]rune{r}))
			if u+w > units {
				break
			}
			u += w
			n++
		}
		return n + 1
	}
	var set []string
	for _, d := range diags {
		sev := d.Severity
		if sev == 0 {
			sev = 1
		}
		set = append(set, fmt.Sprintf("%d:%d-%d:%d %d %s", d.Range.Start.Line+1, col(d.Range.Start.Line, d.Range.Start.Character),
			d.Range.End.Line+1, col(d.Range.End.Line, d.Range.End.Character), sev, strings.TrimSpace(d.Message)))
	}
	c.pubs = append(c.pubs, rawPub{at: now, version: version, set: normSet(set)})
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func normSet(set []string) string {
	s := append([]string(nil), set...)
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return strings.Join(out, "\n")
}

func (c *anyServer) send(method, path, lang, text string, version int) int {
	c.mu.Lock()
	c.text = text
	n := len(c.pubs)
	c.mu.Unlock()
	var params map[string]any
	if method == "textDocument/didOpen" {
		params = map[string]any{"textDocument": map[string]any{"uri": fileURI(path), "languageId": lang, "version": version, "text": text}}
	} else {
		params = map[string]any{"textDocument": map[string]any{"uri": fileURI(path), "version": version},
			"contentChanges": []map[string]string{{"text": text}}}
	}
	_ = c.conn.Notify(context.Background(), method, params)
	if c.pull {
		// Asked at once: the answer waits for the analysis of this text.
		go func() {
			var rep struct {
				Items []rawDiag `json:"items"`
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := c.conn.Call(ctx, "textDocument/diagnostic", map[string]any{
				"textDocument": map[string]string{"uri": fileURI(path)},
			}, &rep); err == nil {
				v := version
				c.record(time.Now(), &v, rep.Items)
			}
		}()
	}
	return n
}

// await returns the arrival of the first publish after the first skip
// publishes that carries want (and version, when the server sends
// versions).
func (c *anyServer) await(tb testing.TB, skip int, version int, want string) time.Time {
	tb.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c.mu.Lock()
		for _, p := range c.pubs[skip:] {
			if (p.version == nil || *p.version == version) && p.set == want {
				c.mu.Unlock()
				return p.at
			}
		}
		c.mu.Unlock()
		if time.Now().After(deadline) {
			tb.Fatalf("raw client: no publish of the final set %q within 2 minutes", want)
		}
		select {
		case <-c.wake:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// quietSet waits for quiet of d after the first skip publishes (at least
// one), and returns the last set.
func (c *anyServer) quietSet(tb testing.TB, skip int, d time.Duration) string {
	tb.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		n := len(c.pubs)
		var last rawPub
		if n > skip {
			last = c.pubs[n-1]
		}
		c.mu.Unlock()
		if n > skip && time.Since(last.at) >= d {
			return last.set
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatal("raw client: no publish, or no quiet, within 2 minutes")
	return ""
}

func (c *anyServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.conn.Call(ctx, "shutdown", nil, nil)
	_ = c.conn.Notify(ctx, "exit", nil)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	killProcessGroup(c.cmd)
	<-done
	_ = c.conn.Close()
}

// calibrate learns the final sets of the broken text and of its change,
// waiting for 3 s of quiet after each.
func calibrate(b *testing.B, s benchServer) (texts [2]string, finals [2]string) {
	dir := fixture(b, s.fixdir)
	data, err := os.ReadFile(filepath.Join(dir, s.broken))
	if err != nil {
		b.Fatal(err)
	}
	texts = [2]string{string(data), s.change(string(data))}
	cmd, args, env := s.start(b)
	c := startAny(b, dir, s.pull, s.config(cmd, args, dir), cmd, args, env)
	defer c.close()
	path := filepath.Join(dir, s.broken)
	n := c.send("textDocument/didOpen", path, s.lang, texts[0], 1)
	finals[0] = c.quietSet(b, n, 3*time.Second)
	n = c.send("textDocument/didChange", path, s.lang, texts[1], 2)
	finals[1] = c.quietSet(b, n, 3*time.Second)
	if finals[0] == finals[1] || finals[0] == "" {
		b.Fatalf("calibration: the sets do not differ: %q", finals)
	}
	return texts, finals
}

// drainedSet drains m and returns path's diagnostics, normalized.
func drainedSet(m *lsp.Manager, path string) string {
	att, ok := m.Drain()
	if !ok {
		return ""
	}
	var set []string
	for _, f := range att.Files {
		if f.Path != path {
			continue
		}
		for i := range f.Diagnostics {
			d := &f.Diagnostics[i]
			set = append(set, fmt.Sprintf("%d:%d-%d:%d %d %s", d.Range.Start.Line+1, d.Range.Start.Character+1,
				d.Range.End.Line+1, d.Range.End.Character+1, int(d.Severity), d.Message))
		}
	}
	return normSet(set)
}

func benchManager(b *testing.B, s benchServer, dir string) (*lsp.Manager, *lspdiag.Registry) {
	cmd, args, env := s.start(b)
	reg, err := lspdiag.NewRegistry(&lspdiag.RegistryOptions{MaxPerFile: 1000, MaxTotal: 1000})
	if err != nil {
		b.Fatal(err)
	}
	m, err := lsp.NewManager([]lsp.ServerConfig{s.config(cmd, args, dir)}, &lsp.ManagerOptions{
		Registry: reg, ProjectDir: dir, Env: env, SettleTimeout: 2 * time.Minute,
	})
	if err != nil {
		b.Fatal(err)
	}
	return m, reg
}

func shutdown(m *lsp.Manager) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = m.Shutdown(ctx)
}

func report(b *testing.B, ours, base samples, early int) {
	b.ReportMetric(ms(ours.quantile(0.5)), "settle-median-ms")
	b.ReportMetric(ms(ours.quantile(0.9)), "settle-p90-ms")
	b.ReportMetric(ms(base.quantile(0.5)), "server-median-ms")
	b.ReportMetric(ms(base.quantile(0.9)), "server-p90-ms")
	b.ReportMetric(float64(ours.quantile(0.5))/float64(base.quantile(0.5)), "median-ratio")
	// The goal: median within 1.2x of the server's time plus 50 ms; below 1 is met.
	b.ReportMetric(float64(ours.quantile(0.5))/float64(1.2*float64(base.quantile(0.5))+float64(50*time.Millisecond)), "goal-ratio")
	// The measure: the median against the server's final answer
	// plus 50 ms.
	b.ReportMetric(float64(ours.quantile(0.5))/float64(base.quantile(0.5)+50*time.Millisecond), "final+50ms-ratio")
	b.ReportMetric(float64(early), "early-returns")
}

func benchCold(b *testing.B, s benchServer) {
	texts, finals := calibrate(b, s)
	dir := fixture(b, s.fixdir)
	path := filepath.Join(dir, s.broken)
	ctx := context.Background()
	var ours, base samples
	early := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ourRun := func() {
			m, _ := benchManager(b, s, dir)
			start := time.Now()
			if err := m.Open(ctx, path); err != nil {
				b.Fatal(err)
			}
			res, err := m.Settle(ctx, path)
			el := time.Since(start)
			if err != nil || !res.Fresh {
				b.Fatalf("settle: %+v %v", res, err)
			}
			ours = append(ours, el)
			if got := drainedSet(m, path); got != finals[0] {
				early++
				b.Logf("early return (%s, %v): drained %q, final %q", res.Reason, el, got, finals[0])
			}
			shutdown(m)
		}
		rawRun := func() {
			cmd, args, env := s.start(b)
			rdir := fixture(b, s.fixdir)
			start := time.Now()
			c := startAny(b, rdir, s.pull, s.config(cmd, args, rdir), cmd, args, env)
			n := c.send("textDocument/didOpen", filepath.Join(rdir, s.broken), s.lang, texts[0], 1)
			base = append(base, c.await(b, n, 1, finals[0]).Sub(start))
			c.close()
		}
		if i%2 == 0 {
			ourRun()
			rawRun()
		} else {
			rawRun()
			ourRun()
		}
	}
	b.StopTimer()
	report(b, ours, base, early)
}

func benchChange(b *testing.B, s benchServer) {
	texts, finals := calibrate(b, s)
	dir := fixture(b, s.fixdir)
	path := filepath.Join(dir, s.broken)
	ctx := context.Background()
	m, reg := benchManager(b, s, dir)
	defer shutdown(m)
	if err := m.Open(ctx, path); err != nil {
		b.Fatal(err)
	}
	if _, err := m.Settle(ctx, path); err != nil {
		b.Fatal(err)
	}
	m.Drain()
	rdir := fixture(b, s.fixdir)
	rpath := filepath.Join(rdir, s.broken)
	cmd, args, env := s.start(b)
	c := startAny(b, rdir, s.pull, s.config(cmd, args, rdir), cmd, args, env)
	defer c.close()
	n := c.send("textDocument/didOpen", rpath, s.lang, texts[0], 1)
	c.await(b, n, 1, finals[0])
	version := 1
	var ours, base samples
	early := 0
	round := func(k int) (time.Duration, time.Duration, bool) {
		var o, r time.Duration
		ok := true
		ourRound := func() {
			reg.Reset(fileURI(path)) // the next drain is the whole set
			start := time.Now()
			if err := m.Change(ctx, path, texts[k]); err != nil {
				b.Fatal(err)
			}
			res, err := m.Settle(ctx, path)
			o = time.Since(start)
			if err != nil || !res.Fresh {
				b.Fatalf("settle: %+v %v", res, err)
			}
			if got := drainedSet(m, path); got != finals[k] {
				ok = false
				b.Logf("early return (%s, %v): drained %q, final %q", res.Reason, o, got, finals[k])
			}
		}
		rawRound := func() {
			version++
			start := time.Now()
			n := c.send("textDocument/didChange", rpath, s.lang, texts[k], version)
			r = c.await(b, n, version, finals[k]).Sub(start)
		}
		if k == 0 {
			ourRound()
			rawRound()
		} else {
			rawRound()
			ourRound()
		}
		return o, r, ok
	}
	// Warm both up.
	for i := range 4 {
		round((i + 1) % 2)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o, r, ok := round((i + 1) % 2)
		ours, base = append(ours, o), append(base, r)
		if !ok {
			early++
		}
	}
	b.StopTimer()
	report(b, ours, base, early)
}
