package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/idebridge/idebridge/diag"

	"github.com/idebridge/idebridge/cabi/abispec"
	"github.com/idebridge/idebridge/lspdiag"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the Go API")

// publishLine is one line of testdata/publishes.tsv: server TAB params.
type publishLine struct {
	server string
	params string
}

func readPublishes(t testing.TB) []publishLine {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "publishes.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []publishLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		server, params, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			t.Fatalf("bad line %q", sc.Text())
		}
		lines = append(lines, publishLine{server, params})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// goldenRenderOptions are the options of testdata/render.golden.txt, also
// used by the binding tests.
var goldenRenderOptions = &diag.RenderOptions{ProjectDir: "/p"}

// checkGolden compares got with testdata/name (which holds got plus a final
// newline), or rewrites the file with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(got, '\n'), want) {
		t.Errorf("%s differs:\ngot  %s\nwant %s", name, got, want)
	}
}

// TestRegistryMatchesGoByteForByte runs testdata/publishes.tsv through the
// Go API and through the exports, and requires the same bytes from both;
// the Go output is the golden file the binding tests compare with.
func TestRegistryMatchesGoByteForByte(t *testing.T) {
	lockThread(t)
	noLeak(t)
	lines := readPublishes(t)

	reg := newGoRegistry(t)
	for _, l := range lines {
		if err := reg.Publish(l.server, json.RawMessage(l.params)); err != nil {
			t.Fatal(err)
		}
	}
	att, ok := reg.Drain()
	if !ok {
		t.Fatal("Go drain found nothing")
	}
	goJSON, err := json.Marshal(att)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "drain.golden.json", goJSON)
	checkGolden(t, "render.golden.txt", []byte(att.Render(goldenRenderOptions)))

	var h C_uint64
	wantStatus(t, idb_registry_new(nil, &h), 0, "idb_registry_new")
	defer idb_registry_free(h)
	for _, l := range lines {
		wantStatus(t, idb_registry_publish(h, cstr(t, l.server), cstr(t, l.params)), 0, "idb_registry_publish")
	}
	var out *C_char
	wantStatus(t, idb_registry_drain(h, &out), 0, "idb_registry_drain")
	abiJSON := take(out)
	if abiJSON != string(goJSON) {
		t.Errorf("ABI drain differs from Go:\nabi %s\ngo  %s", abiJSON, goJSON)
	}
	out = nil
	wantStatus(t, idb_render_attachment(cstr(t, abiJSON), cstr(t, `{"projectDir":"/p"}`), &out), 0, "idb_render_attachment")
	if got, want := take(out), att.Render(goldenRenderOptions); got != want {
		t.Errorf("ABI render differs from Go:\nabi %s\ngo  %s", got, want)
	}
	// Everything was delivered: the next drain is empty.
	out = cstr(t, "sentinel")
	wantStatus(t, idb_registry_drain(h, &out), 0, "idb_registry_drain")
	if out != nil {
		t.Errorf("second drain returned %q, want NULL", take(out))
	}
}

func TestRegistryLifecycle(t *testing.T) {
	lockThread(t)
	noLeak(t)
	var h C_uint64
	wantStatus(t, idb_registry_new(cstr(t, `{"maxPerFile":2,"minSeverity":"Warning"}`), &h), 0, "idb_registry_new")
	defer idb_registry_free(h)
	if h == 0 || uint64(h)>>kindShift != uint64(kindRegistry) {
		t.Fatalf("handle %#x", uint64(h))
	}
	params := `{"uri":"file:///a.go","version":5,"diagnostics":[` +
		`{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":1}},"severity":1,"message":"e1"},` +
		`{"range":{"start":{"line":2,"character":0},"end":{"line":2,"character":1}},"severity":2,"message":"w1"},` +
		`{"range":{"start":{"line":3,"character":0},"end":{"line":3,"character":1}},"severity":1,"message":"e2"},` +
		`{"range":{"start":{"line":4,"character":0},"end":{"line":4,"character":1}},"severity":4,"message":"hint"}]}`
	wantStatus(t, idb_registry_publish(h, cstr(t, "srv"), cstr(t, params)), 0, "idb_registry_publish")
	var out *C_char
	wantStatus(t, idb_registry_drain(h, &out), 0, "idb_registry_drain")
	var att diag.Attachment
	if err := json.Unmarshal([]byte(take(out)), &att); err != nil {
		t.Fatal(err)
	}
	// maxPerFile 2 keeps the two errors; the hint is filtered by minSeverity.
	if len(att.Files) != 1 || len(att.Files[0].Diagnostics) != 2 || att.Cut != 1 {
		t.Fatalf("attachment %+v", att)
	}
	// The warning left out by the limit is new when the set is published
	// again; then everything has been delivered.
	wantStatus(t, idb_registry_publish(h, cstr(t, "srv"), cstr(t, params)), 0, "idb_registry_publish")
	wantStatus(t, idb_registry_drain(h, &out), 0, "idb_registry_drain")
	if s := take(out); !strings.Contains(s, `"message":"w1"`) || strings.Contains(s, `"e1"`) {
		t.Fatalf("second drain %s, want only the warning", s)
	}

	// The same set again is deduplicated; after a reset of the document it
	// is delivered again; after a reset of everything too.
	for _, reset := range []*C_char{nil, cstr(t, "file:///a.go")} {
		wantStatus(t, idb_registry_publish(h, cstr(t, "srv"), cstr(t, params)), 0, "idb_registry_publish")
		out = nil
		wantStatus(t, idb_registry_drain(h, &out), 0, "idb_registry_drain")
		if out != nil {
			t.Fatalf("republished set delivered again: %s", take(out))
		}
		wantStatus(t, idb_registry_reset(h, reset), 0, "idb_registry_reset")
		wantStatus(t, idb_registry_publish(h, cstr(t, "srv"), cstr(t, params)), 0, "idb_registry_publish")
		wantStatus(t, idb_registry_drain(h, &out), 0, "idb_registry_drain")
		if out == nil {
			t.Fatalf("reset(%v) did not make the set deliverable again", reset)
		}
		take(out)
		// Deliver the warning the limit left out again.
		wantStatus(t, idb_registry_publish(h, cstr(t, "srv"), cstr(t, params)), 0, "idb_registry_publish")
		wantStatus(t, idb_registry_drain(h, &out), 0, "idb_registry_drain")
		take(out)
	}

	// A version older than the document's is stale.
	wantStatus(t, idb_registry_set_version(h, cstr(t, "file:///a.go"), 7), 0, "idb_registry_set_version")
	wantStatus(t, idb_registry_reset(h, nil), 0, "idb_registry_reset")
	wantStatus(t, idb_registry_publish(h, cstr(t, "srv"), cstr(t, params)), 0, "idb_registry_publish")
	out = nil
	wantStatus(t, idb_registry_drain(h, &out), 0, "idb_registry_drain")
	if out != nil {
		t.Errorf("stale publish (version 5 < 7) delivered: %s", take(out))
	}
	wantStatus(t, idb_registry_stats(h, &out), 0, "idb_registry_stats")
	var stats lspdiag.Stats
	if err := json.Unmarshal([]byte(take(out)), &stats); err != nil {
		t.Fatal(err)
	}
	if stats.Stale != 1 || stats.Attachments != 6 {
		t.Errorf("stats %+v", stats)
	}

	// An invalid diagnostic is dropped and noted; the valid ones stay.
	wantStatus(t, idb_registry_publish(h, cstr(t, "srv"), cstr(t, `{"uri":"file:///b.go","diagnostics":[{"message":1},`+
		`{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":1}},"message":"kept","severity":99},`+
		`{"range":{"start":{"line":2,"character":0},"end":{"line":2,"character":1}},"message":"kept"}]}`)), 0, "idb_registry_publish")
	wantStatus(t, idb_registry_drain(h, &out), 0, "idb_registry_drain")
	if s := take(out); !strings.Contains(s, `"message":"kept"`) ||
		!strings.Contains(s, `"notes":["/b.go: 2 invalid diagnostics from srv were dropped (diagnostics[0].range: missing)"]`) {
		t.Errorf("drain after a publish with invalid diagnostics: %s", s)
	}

	// Bad arguments.
	wantStatus(t, idb_registry_publish(h, cstr(t, "srv"), cstr(t, `{"uri":"file:///a.go","diagnostics":{}}`)), abispec.StArgument, "idb_registry_publish", "malformed diagnostics")
	wantStatus(t, idb_registry_publish(h, cstr(t, "srv"), cstr(t, `{"uri":`)), abispec.StArgument, "idb_registry_publish")
	wantStatus(t, idb_registry_publish(h, nil, cstr(t, params)), abispec.StArgument, "idb_registry_publish", "server is NULL")
	wantStatus(t, idb_registry_publish(h, cstr(t, "srv"), nil), abispec.StArgument, "idb_registry_publish", "params_json is NULL")
	wantStatus(t, idb_registry_set_version(h, cstr(t, "file:///a.go"), -1), abispec.StArgument, "idb_registry_set_version", "out of range")
	wantStatus(t, idb_registry_drain(h, nil), abispec.StArgument, "idb_registry_drain", "out is NULL")

	wantStatus(t, idb_registry_free(h), 0, "idb_registry_free")
	wantStatus(t, idb_registry_free(h), abispec.StHandle, "idb_registry_free", "already freed")
	wantStatus(t, idb_registry_drain(h, &out), abispec.StHandle, "idb_registry_drain", "already freed")
}

func TestRegistryOptionsErrors(t *testing.T) {
	lockThread(t)
	noLeak(t)
	var h C_uint64
	for opts, msg := range map[string]string{
		`{"maxPerFiles":2}`:                    `unknown field "maxPerFiles"`,
		`{"minSeverity":"bad"}`:                "severity",
		`{"minSeverity":9}`:                    "severity",
		`{"minSeverity":-1}`:                   "options_json: minSeverity: number -1 is not a severity (1 to 4)",
		`{"maxDocuments":-1}`:                  "MaxDocuments is -1",
		`{"maxPerPublish":-2}`:                 "MaxPerPublish is -2",
		`{"maxDeliveredPerDocument":-1}`:       "MaxDeliveredPerDocument is -1",
		`{"maxPerFile":1.5}`:                   "maxPerFile",
		`{"maxTotal":1e3}`:                     "maxTotal",
		`{"maxDocuments":9223372036854775808}`: "maxDocuments",
		`[1]`:                                  "options_json",
		`{} {}`:                                "unexpected data",
	} {
		wantStatus(t, idb_registry_new(cstr(t, opts), &h), abispec.StArgument, "idb_registry_new", msg)
	}
	wantStatus(t, idb_registry_new(cstr(t, "{}"), nil), abispec.StArgument, "idb_registry_new", "out_handle is NULL")
	// Negative limits of an attachment mean none; the largest value is
	// no limit either.
	for _, opts := range []string{`{"maxPerFile":-1,"maxTotal":-1}`, `{"maxPerFile":9223372036854775807,"maxTotal":9223372036854775807,` +
		`"maxPerPublish":9223372036854775807,"maxDocuments":9223372036854775807,"maxDeliveredPerDocument":9223372036854775807}`} {
		wantStatus(t, idb_registry_new(cstr(t, opts), &h), 0, "idb_registry_new")
		var ds []string
		for i := range 40 {
			ds = append(ds, fmt.Sprintf(`{"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":1}},"message":"m"}`, i, i))
		}
		wantStatus(t, idb_registry_publish(h, cstr(t, "srv"), cstr(t, `{"uri":"file:///a.go","diagnostics":[`+strings.Join(ds, ",")+`]}`)), 0, "idb_registry_publish")
		var out *C_char
		wantStatus(t, idb_registry_drain(h, &out), 0, "idb_registry_drain")
		var att diag.Attachment
		if err := json.Unmarshal([]byte(take(out)), &att); err != nil || att.Count() != 40 {
			t.Errorf("%s: drained %d of 40 (%v)", opts, att.Count(), err)
		}
		wantStatus(t, idb_registry_free(h), 0, "idb_registry_free")
	}
	for _, empty := range []string{"", "null", " "} {
		wantStatus(t, idb_registry_new(cstr(t, empty), &h), 0, "idb_registry_new")
		wantStatus(t, idb_registry_free(h), 0, "idb_registry_free")
	}
}

// TestRegistryBadHandles passes zero, stale, random and wrong-kind handles
// to every registry export.
func TestRegistryBadHandles(t *testing.T) {
	lockThread(t)
	noLeak(t)
	var stale C_uint64
	wantStatus(t, idb_registry_new(nil, &stale), 0, "idb_registry_new")
	wantStatus(t, idb_registry_free(stale), 0, "idb_registry_free")
	wrongKind := C_uint64(handles.add(kindIDE, "not a registry"))
	defer handles.remove(kindIDE, uint64(wrongKind))
	params := cstr(t, `{"uri":"file:///x","diagnostics":[]}`)
	for _, h := range []C_uint64{0, stale, 1, 0xdeadbeef, C_uint64(kindRegistry)<<kindShift | 12345, wrongKind} {
		var out *C_char
		calls := map[string]C_int{
			"idb_registry_publish":     idb_registry_publish(h, cstr(t, "s"), params),
			"idb_registry_set_version": idb_registry_set_version(h, cstr(t, "file:///x"), 1),
			"idb_registry_drain":       idb_registry_drain(h, &out),
			"idb_registry_reset":       idb_registry_reset(h, nil),
			"idb_registry_stats":       idb_registry_stats(h, &out),
			"idb_registry_free":        idb_registry_free(h),
		}
		for name, st := range calls {
			if st != abispec.StHandle {
				t.Errorf("%s(%#x) = %d, want %d", name, uint64(h), st, abispec.StHandle)
			}
		}
		if msg := lastError(); !strings.Contains(msg, "bad handle") {
			t.Errorf("handle %#x: last error %q", uint64(h), msg)
		}
	}
}

// TestRegistryConcurrent drives one shared registry and eight private ones
// from eight threads at once.
func TestRegistryConcurrent(t *testing.T) {
	noLeak(t)
	// No total limit, so that every drain of the shared registry delivers
	// all that is pending however the threads interleave.
	var shared C_uint64
	if st := idb_registry_new(cstr(t, `{"maxTotal":1000000}`), &shared); st != 0 {
		t.Fatal(st)
	}
	defer idb_registry_free(shared)
	var wg sync.WaitGroup
	delivered := make([]int, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lockThread(t)
			var own C_uint64
			if st := idb_registry_new(nil, &own); st != 0 {
				t.Error(st)
				return
			}
			defer idb_registry_free(own)
			server := cString(fmt.Sprintf("srv%d", g))
			defer freeC(unsafe.Pointer(server))
			for i := 0; i < 200; i++ {
				p := cString(fmt.Sprintf(`{"uri":"file:///g%d/%d.go","diagnostics":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"message":"m"}]}`, g, i))
				for _, h := range []C_uint64{shared, own} {
					if st := idb_registry_publish(h, server, p); st != 0 {
						t.Errorf("publish: %d %s", st, lastError())
					}
				}
				freeC(unsafe.Pointer(p))
				var out *C_char
				if st := idb_registry_drain(own, &out); st != 0 || out == nil {
					t.Errorf("drain own: %d", st)
				}
				take(out)
				delivered[g]++
				if i%10 == 0 {
					if st := idb_registry_drain(shared, &out); st != 0 {
						t.Errorf("drain shared: %d", st)
					}
					take(out)
				}
			}
		}()
	}
	wg.Wait()
	var out *C_char
	idb_registry_drain(shared, &out)
	take(out)
	idb_registry_stats(shared, &out)
	var stats lspdiag.Stats
	if err := json.Unmarshal([]byte(take(out)), &stats); err != nil {
		t.Fatal(err)
	}
	if stats.Published != 1600 || stats.Delivered != 1600 || stats.Pending != 0 {
		t.Errorf("shared registry stats %+v, want 1600 published and delivered", stats)
	}
	for g, n := range delivered {
		if n != 200 {
			t.Errorf("thread %d drained %d times", g, n)
		}
	}
}

func TestRenderAttachmentErrors(t *testing.T) {
	lockThread(t)
	var out *C_char
	wantStatus(t, idb_render_attachment(nil, nil, &out), abispec.StArgument, "idb_render_attachment", "attachment_json is NULL")
	wantStatus(t, idb_render_attachment(cstr(t, "{"), nil, &out), abispec.StArgument, "idb_render_attachment", "attachment_json")
	wantStatus(t, idb_render_attachment(cstr(t, "{}"), cstr(t, `{"max":1}`), &out), abispec.StArgument, "idb_render_attachment", "unknown field")
	wantStatus(t, idb_render_attachment(cstr(t, `{"files":[]}`), nil, &out), 0, "idb_render_attachment")
	take(out)
}

func TestPathConversion(t *testing.T) {
	lockThread(t)
	opts := cstr(t, `{"distro":"Ubuntu"}`)
	for _, c := range []struct{ in, local string }{
		{`C:\Users\me\p\main.go`, "/mnt/c/Users/me/p/main.go"},
		{`\\wsl$\Ubuntu\home\me\x.go`, "/home/me/x.go"},
		{"relative/path", "relative/path"},
	} {
		var out *C_char
		wantStatus(t, idb_path_to_local(cstr(t, c.in), opts, &out), 0, "idb_path_to_local")
		if got := take(out); got != c.local {
			t.Errorf("to local %q = %q, want %q", c.in, got, c.local)
		}
	}
	var out *C_char
	wantStatus(t, idb_path_to_ide(cstr(t, "/home/me/x.go"), opts, &out), 0, "idb_path_to_ide")
	if got := take(out); got != `\\wsl$\Ubuntu\home\me\x.go` {
		t.Errorf("to IDE = %q", got)
	}
	wantStatus(t, idb_path_to_ide(cstr(t, "/m/d/x"), cstr(t, `{"mountRoot":"/m","uncHost":"wsl.localhost"}`), &out), 0, "idb_path_to_ide")
	if got := take(out); got != `D:\x` {
		t.Errorf("to IDE with mountRoot = %q", got)
	}
	wantStatus(t, idb_path_to_local(nil, opts, &out), abispec.StArgument, "idb_path_to_local", "path is NULL")
	wantStatus(t, idb_path_to_local(cstr(t, "x"), cstr(t, `{"distribution":"x"}`), &out), abispec.StArgument, "idb_path_to_local", "unknown field")
	wantStatus(t, idb_path_to_ide(cstr(t, "x"), opts, nil), abispec.StArgument, "idb_path_to_ide", "out is NULL")
}
