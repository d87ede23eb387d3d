package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPortFromName(t *testing.T) {
	tests := []struct {
		name string
		port int
		ok   bool
	}{
		{"12345.lock", 12345, true},
		{"/home/me/.claude/ide/1.lock", 1, true},
		{"65535.lock", 65535, true},
		{"65536.lock", 0, false},
		{"0.lock", 0, false},
		{"123456.lock", 0, false},
		{".lock", 0, false},
		{"12a.lock", 0, false},
		{"-1.lock", 0, false},
		{"+1.lock", 0, false},
		{"123.lock.tmp", 0, false},
		{"123.LOCK", 0, false},
		{"abc", 0, false},
	}
	for _, tt := range tests {
		port, ok := PortFromName(tt.name)
		if port != tt.port || ok != tt.ok {
			t.Errorf("PortFromName(%q) = %d, %v; want %d, %v", tt.name, port, ok, tt.port, tt.ok)
		}
	}
}

func TestParseJSON(t *testing.T) {
	tests := []struct {
		name string
		file string
		data string
		want Lockfile
	}{
		{
			name: "vscode",
			file: "54321.lock",
			data: `{"pid":4242,"workspaceFolders":["/home/dev/proj"],"ideName":"Visual Studio Code","transport":"ws","runningInWindows":false,"authToken":"1c6b5f1e-tok"}`,
			want: Lockfile{Port: 54321, PID: 4242, WorkspaceFolders: []string{"/home/dev/proj"}, IDEName: "Visual Studio Code", Transport: TransportWS, AuthToken: "1c6b5f1e-tok"},
		},
		{
			name: "escaped slashes and unknown fields",
			file: "/x/ide/1234.lock",
			data: `{"workspaceFolders":["\/home\/dev\/proj","\/tmp"],"pid":7,"ideName":"Neovim","transport":"ws","authToken":"t","future":{"nested":[1,2]},"extra":null}`,
			want: Lockfile{Port: 1234, Path: "/x/ide/1234.lock", PID: 7, WorkspaceFolders: []string{"/home/dev/proj", "/tmp"}, IDEName: "Neovim", Transport: TransportWS, AuthToken: "t"},
		},
		{
			name: "missing transport is sse",
			file: "1.lock",
			data: `{"workspaceFolders":["/a"],"pid":1,"ideName":"IntelliJ IDEA"}`,
			want: Lockfile{Port: 1, PID: 1, WorkspaceFolders: []string{"/a"}, IDEName: "IntelliJ IDEA", Transport: TransportSSE},
		},
		{
			name: "other transport values are sse",
			file: "2.lock",
			data: `{"workspaceFolders":[],"transport":"WS"}`,
			want: Lockfile{Port: 2, Transport: TransportSSE},
		},
		{
			name: "non-string transport is sse",
			file: "3.lock",
			data: `{"transport":1}`,
			want: Lockfile{Port: 3, Transport: TransportSSE},
		},
		{
			name: "keys are exact",
			file: "4.lock",
			data: `{"PID":9,"Transport":"ws","WorkspaceFolders":["/x"],"pid":3}`,
			want: Lockfile{Port: 4, PID: 3, Transport: TransportSSE},
		},
		{
			name: "last duplicate key wins",
			file: "5.lock",
			data: `{"pid":1,"pid":2}`,
			want: Lockfile{Port: 5, PID: 2, Transport: TransportSSE},
		},
		{
			name: "nulls are absent",
			file: "6.lock",
			data: `{"pid":null,"workspaceFolders":null,"ideName":null,"authToken":null,"runningInWindows":null}`,
			want: Lockfile{Port: 6, Transport: TransportSSE},
		},
		{
			name: "integral float pid, windows ide, BOM and white space",
			file: "7.lock",
			data: "\uFEFF \n{\"pid\":1234.0,\"workspaceFolders\":[\"C:\\\\Users\\\\me\\\\p\"],\"runningInWindows\":true}\n",
			want: Lockfile{Port: 7, PID: 1234, WorkspaceFolders: []string{`C:\Users\me\p`}, RunningInWindows: true, Transport: TransportSSE},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.file, []byte(tt.data))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLegacy(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string
	}{
		{"lf", "/home/me/a\n/home/me/b\n", []string{"/home/me/a", "/home/me/b"}},
		{"crlf and blank lines", "C:\\p\r\n\r\n  D:\\q  \r\n", []string{`C:\p`, `D:\q`}},
		{"lone cr", "/a\r/b", []string{"/a", "/b"}},
		{"single folder without newline", "/only", []string{"/only"}},
		{"a later line may start with a brace", "/a\n{b", []string{"/a", "{b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("999.lock", []byte(tt.data))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := &Lockfile{Port: 999, Legacy: true, Transport: TransportSSE, WorkspaceFolders: tt.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, file, data, wantMsg string
	}{
		{"bad name", "foo.json", `{}`, "not a lockfile name"},
		{"empty", "/d/10.lock", " \n\t", "file is empty"},
		{"truncated json", "/d/11.lock", `{"pid": 1, "workspaceFolders": [`, "invalid JSON"},
		{"trailing garbage", "/d/12.lock", `{"pid":1} x`, "invalid JSON"},
		{"folders not strings", "/d/13.lock", `{"workspaceFolders":[1]}`, `"workspaceFolders" is not a list of strings`},
		{"folders not a list", "/d/14.lock", `{"workspaceFolders":"/a"}`, `"workspaceFolders" is not a list of strings`},
		{"pid a string", "/d/15.lock", `{"pid":"12"}`, `"pid" is not a number`},
		{"pid negative", "/d/16.lock", `{"pid":-3}`, `"pid" is not a process id: -3`},
		{"pid fractional", "/d/17.lock", `{"pid":1.5}`, `"pid" is not a process id`},
		{"pid huge", "/d/18.lock", `{"pid":1e30}`, `"pid" is not a process id`},
		{"ideName not string", "/d/19.lock", `{"ideName":3}`, `"ideName" is not a string`},
		{"runningInWindows not bool", "/d/20.lock", `{"runningInWindows":"yes"}`, `"runningInWindows" is not a boolean`},
		{"authToken not string", "/d/21.lock", `{"authToken":{}}`, `"authToken" is not a string`},
		{"binary", "/d/22.lock", "\x00\x01\x02", "binary content"},
		{"invalid utf-8", "/d/23.lock", "/a\xff\xfe", "binary content"},
		{"mark after white space", "/d/24.lock", " \ufeff/home/u/p", "byte-order mark after white space"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lf, err := Parse(tt.file, []byte(tt.data))
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", lf)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Path != tt.file {
				t.Errorf("error %v is not a *ParseError for %s", err, tt.file)
			}
			if !strings.Contains(err.Error(), tt.file) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q should name %s and say %q", err, tt.file, tt.wantMsg)
			}
		})
	}
	if _, err := Parse("x.txt", []byte("{}")); !errors.Is(err, ErrNotLockfile) {
		t.Errorf("bad name: %v does not match ErrNotLockfile", err)
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, lf := range []*Lockfile{
		{Port: 1, PID: 2, WorkspaceFolders: []string{"/a", `C:\b`, "/with\nnewline"}, IDEName: "VS <Code>", Transport: TransportWS, RunningInWindows: true, AuthToken: "tok"},
		{Port: 65535, Transport: TransportSSE},
		{Port: 3, Legacy: true, Transport: TransportSSE, WorkspaceFolders: []string{"/a b", `D:\x`, "{later"}},
	} {
		data, err := lf.Marshal()
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", lf, err)
		}
		got, err := Parse(PortName(lf.Port), data)
		if err != nil {
			t.Fatalf("Parse(Marshal(%+v)) = %v (data %q)", lf, err, data)
		}
		if diff := cmp.Diff(lf, got); diff != "" {
			t.Errorf("round trip of %q (-want +got):\n%s", data, diff)
		}
	}
}

func TestMarshalRefusesWhatCannotRoundTrip(t *testing.T) {
	for _, lf := range []*Lockfile{
		{Port: 1, Legacy: true},
		{Port: 1, Legacy: true, WorkspaceFolders: []string{"/a\nb"}},
		{Port: 1, Legacy: true, WorkspaceFolders: []string{" /a"}},
		{Port: 1, Legacy: true, WorkspaceFolders: []string{""}},
		{Port: 1, Legacy: true, WorkspaceFolders: []string{"{/a"}},
		{Port: 1, Legacy: true, WorkspaceFolders: []string{"/a\x00"}},
		{Port: 1, PID: -1},
	} {
		if data, err := lf.Marshal(); err == nil {
			t.Errorf("Marshal(%+v) = %q, want an error", lf, data)
		}
	}
}

func TestWriteAndRemove(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config", "ide")
	lf := &Lockfile{Port: 40001, PID: os.Getpid(), WorkspaceFolders: []string{"/p"}, IDEName: "Test", Transport: TransportWS, AuthToken: "secret"}
	path, err := Write(dir, lf)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "40001.lock"); path != want || lf.Path != want {
		t.Errorf("Write returned %q (lf.Path %q), want %q", path, lf.Path, want)
	}
	if runtime.GOOS != "windows" {
		assertMode(t, dir, 0o700)
		assertMode(t, path, 0o600)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(lf, got); diff != "" {
		t.Errorf("written lockfile (-want +got):\n%s", diff)
	}

	// Overwriting replaces the file and leaves no temporary behind.
	lf.IDEName = "Test 2"
	if _, err := Write(dir, lf); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "40001.lock" {
		t.Errorf("directory holds %v, want only 40001.lock", entries)
	}

	if err := Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Remove, Stat = %v", err)
	}
	if err := Remove(path); err != nil {
		t.Errorf("second Remove = %v, want nil", err)
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, &Lockfile{Port: 0}); err == nil {
		t.Error("Write with port 0 succeeded")
	}
	if _, err := Write(dir, &Lockfile{Port: 5, Legacy: true}); err == nil {
		t.Error("Write of a legacy lockfile without folders succeeded")
	}
	// A file where the directory should be.
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(filepath.Join(blocker, "ide"), &Lockfile{Port: 5}); err == nil {
		t.Error("Write under a regular file succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("failed writes left files behind: %v", entries)
	}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s has mode %v, want %v", path, got, want)
	}
}
