//go:build linux

package main

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/idebridge/idebridge/cabi/abispec"
)

// builtLib is the c-shared library built once per test run by buildLib.
var builtLib struct {
	once      sync.Once
	dir, err  string
	so, hfile string
	ide       string // the headless IDE of the C test
}

func init() {
	removeBuiltLib = func() {
		if builtLib.dir != "" {
			os.RemoveAll(builtLib.dir)
		}
	}
}

// buildLib builds libidebridge.so (and cgo's header beside it) into a
// temporary directory, once per test binary.
func buildLib(t *testing.T) (so, cgoHeader string) {
	t.Helper()
	builtLib.once.Do(func() {
		dir, err := os.MkdirTemp("", "libidebridge-test-")
		if err != nil {
			builtLib.err = err.Error()
			return
		}
		builtLib.dir = dir
		builtLib.so = filepath.Join(dir, "libidebridge.so")
		builtLib.hfile = filepath.Join(dir, "libidebridge.h")
		builtLib.ide = filepath.Join(dir, "ideserve")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", builtLib.so, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			builtLib.err = "go build -buildmode=c-shared: " + err.Error() + "\n" + string(out)
			return
		}
		if out, err := exec.Command("go", "build", "-o", builtLib.ide, "./test/ideserve").CombinedOutput(); err != nil {
			builtLib.err = "go build ./test/ideserve: " + err.Error() + "\n" + string(out)
		}
	})
	if builtLib.err != "" {
		t.Fatal(builtLib.err)
	}
	return builtLib.so, builtLib.hfile
}

// prototypeRE matches one function declaration on a line.
var prototypeRE = regexp.MustCompile(`^(?:extern\s+)?([A-Za-z_][A-Za-z0-9_ \*]*?[\s\*])(idb_[a-z0-9_]+)\((.*)\);`)

// normType drops const, parameter names and spaces: "const char *name"
// and "char* name" both give "char*".
func normType(decl string, hasName bool) string {
	decl = strings.TrimSpace(decl)
	if hasName {
		i := strings.LastIndexAny(decl, " *")
		decl = decl[:i+1]
	}
	decl = strings.ReplaceAll(decl, "const", "")
	return strings.Join(strings.Fields(decl), "")
}

// prototypes parses a header's idb_* declarations into normalised
// signatures: name -> "ret(param,param)".
func prototypes(t *testing.T, header string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(header, "\n") {
		m := prototypeRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		var ps []string
		if p := strings.TrimSpace(m[3]); p != "void" && p != "" {
			for _, param := range strings.Split(p, ",") {
				ps = append(ps, normType(param, true))
			}
		}
		out[m[2]] = normType(m[1], false) + "(" + strings.Join(ps, ",") + ")"
	}
	return out
}

// TestHeaderMatchesCgoExports builds the library and checks every
// prototype of cabi/include/idebridge.h against the header cgo writes for
// the Go exports (identical up to const and parameter names), and that the
// functions written in C are exported by the library.
func TestHeaderMatchesCgoExports(t *testing.T) {
	so, cgoHeaderPath := buildLib(t)
	ours, err := os.ReadFile(filepath.Join("include", "idebridge.h"))
	if err != nil {
		t.Fatal(err)
	}
	cgoHeader, err := os.ReadFile(cgoHeaderPath)
	if err != nil {
		t.Fatal(err)
	}
	want := prototypes(t, string(ours))
	got := prototypes(t, string(cgoHeader))
	if len(want) != len(abispec.Funcs) {
		t.Errorf("idebridge.h declares %d functions, the table lists %d", len(want), len(abispec.Funcs))
	}
	f, err := elf.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var exported []string
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "idb_") && s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			exported = append(exported, s.Name)
		}
	}
	for _, fn := range abispec.Funcs {
		if !slices.Contains(exported, fn.Name) {
			t.Errorf("%s is not exported by the library", fn.Name)
		}
		if fn.InC {
			if _, ok := got[fn.Name]; ok {
				t.Errorf("%s is marked InC but is a Go export", fn.Name)
			}
			continue
		}
		if got[fn.Name] == "" {
			t.Errorf("%s: no Go export (cgo header lacks it)", fn.Name)
		} else if got[fn.Name] != want[fn.Name] {
			t.Errorf("%s: idebridge.h says %s, cgo says %s", fn.Name, want[fn.Name], got[fn.Name])
		}
	}
	for _, name := range exported {
		if _, ok := want[name]; !ok {
			t.Errorf("the library exports %s, which idebridge.h does not declare", name)
		}
	}
}

// TestCProgram compiles cabi/test/abi_test.c against the generated header
// and the freshly built library, and runs it.
func TestCProgram(t *testing.T) {
	so, _ := buildLib(t)
	dir := filepath.Dir(so)
	bin := filepath.Join(t.TempDir(), "abi_test")
	cc := exec.Command("gcc", "-Wall", "-Wextra", "-Werror", "-O2", "-pthread", "-Iinclude",
		filepath.Join("test", "abi_test.c"), "-L"+dir, "-lidebridge", "-Wl,-rpath,"+dir, "-o", bin)
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	run := exec.Command(bin)
	run.Env = cTestEnv(t)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	err := run.Run()
	t.Logf("%s", stdout.String())
	if err != nil {
		t.Fatalf("abi_test: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), " 0 failed") {
		t.Fatalf("abi_test did not report success:\n%s\n%s", stdout.String(), stderr.String())
	}
}

// cTestEnv is the C test's environment.
func cTestEnv(t *testing.T) []string {
	return append(os.Environ(), "IDB_TESTDATA=testdata", "IDEBRIDGE_TEST_IDE="+builtLib.ide, "GOPLS="+goplsPath(t))
}

// TestPythonBindings runs the Python unittest suite against the library
// built for this run. Every test of the suite fails when it leaves a handle
// live in the library's table (tests/support.py), so this also checks that
// the binding frees everything it makes.
func TestPythonBindings(t *testing.T) {
	so, _ := buildLib(t)
	cmd := exec.Command("python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".")
	cmd.Dir = filepath.Join("..", "bindings", "python")
	cmd.Env = append(os.Environ(), "IDEBRIDGE_LIB="+so, "IDEBRIDGE_TEST_IDE="+builtLib.ide, "GOPLS="+goplsPath(t), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "\nOK") {
		t.Fatalf("the Python suite did not report OK:\n%s", out)
	}
}
