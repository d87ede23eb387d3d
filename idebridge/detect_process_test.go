package idebridge

import (
	"context"
	"errors"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// textLister is a ProcessLister over fixed ps or tasklist output.
type textLister struct {
	text  string
	parse func(string) ([]Process, error)
}

func (l textLister) List(context.Context) ([]Process, error) { return l.parse(l.text) }

const psLinux = `    1     0 systemd
  812     1 sshd
 2001  1990 code
 2002  2001 code
 2100  1990 cursor
 2200  1990 java
 2300  1990 pycharm.sh
 2400  1990 kworker/0:1-events
`

const psMac = `  PID  PPID COMM
    1     0 /sbin/launchd
  501     1 /Applications/Visual Studio Code.app/Contents/MacOS/Electron
  502   501 /Applications/Visual Studio Code.app/Contents/Frameworks/Code Helper (Renderer).app/Contents/MacOS/Code Helper (Renderer)
  600     1 /Applications/GoLand 2024.1.app/Contents/MacOS/goland
  700     1 /Applications/Android Studio.app/Contents/MacOS/studio
  800     1 /Applications/iTerm.app/Contents/MacOS/iTerm2
`

const tasklistWindows = `"System Idle Process","0","Services","0","8 K"
"Code.exe","4242","Console","1","123,456 K"
"Code.exe","4243","Console","1","23,456 K"
"idea64.exe","5000","Console","1","1,234,567 K"
"Windsurf.exe","5100","Console","1","1 K"
"studio64.exe","5200","Console","1","1 K"
"explorer.exe","6000","Console","1","1 K"
`

func TestParsePS(t *testing.T) {
	procs, err := parsePS(psLinux)
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) != 8 || procs[2] != (Process{PID: 2001, PPID: 1990, Name: "code"}) || procs[7].Name != "kworker/0:1-events" {
		t.Errorf("parsePS = %+v", procs)
	}
	procs, err = parsePS(psMac)
	if err != nil {
		t.Fatal(err)
	}
	want := "/Applications/Visual Studio Code.app/Contents/Frameworks/Code Helper (Renderer).app/Contents/MacOS/Code Helper (Renderer)"
	if len(procs) != 6 || procs[2].Name != want || procs[2].PPID != 501 {
		t.Errorf("parsePS(mac) = %+v", procs)
	}
	for _, bad := range []string{"12 x code\n", "1 2 a\nnot a line\n", "-1 2 x\n", "12 13\n"} {
		if got, err := parsePS(bad); err == nil {
			t.Errorf("parsePS(%q) = %+v, want an error", bad, got)
		}
	}
	if got, err := parsePS("\r\n  \n"); err != nil || len(got) != 0 {
		t.Errorf("parsePS(blank) = %v, %v", got, err)
	}
}

func TestParseTasklist(t *testing.T) {
	procs, err := parseTasklist(tasklistWindows)
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) != 7 || procs[1] != (Process{PID: 4242, Name: "Code.exe"}) {
		t.Errorf("parseTasklist = %+v", procs)
	}
	procs, err = parseTasklist("INFO: No tasks are running which match the specified criteria.\n")
	if err != nil || len(procs) != 0 {
		t.Errorf("parseTasklist(info) = %+v, %v", procs, err)
	}
	withHeader := "\"Image Name\",\"PID\",\"Session Name\",\"Session#\",\"Mem Usage\"\n\"cursor.exe\",\"9\",\"Console\",\"1\",\"1 K\"\n"
	procs, err = parseTasklist(withHeader)
	if err != nil || len(procs) != 1 || procs[0].Name != "cursor.exe" {
		t.Errorf("parseTasklist(header) = %+v, %v", procs, err)
	}
}

func TestIDEForProcess(t *testing.T) {
	tests := map[string]string{
		"code":                              "Visual Studio Code",
		"Code.exe":                          "Visual Studio Code",
		"code-insiders":                     "Visual Studio Code",
		"/usr/share/code/code":              "Visual Studio Code",
		"cursor":                            "Cursor",
		"Cursor.exe":                        "Cursor",
		"windsurf":                          "Windsurf",
		"idea":                              "IntelliJ IDEA",
		"idea64.exe":                        "IntelliJ IDEA",
		"pycharm.sh":                        "PyCharm",
		"webstorm64.exe":                    "WebStorm",
		"phpstorm":                          "PhpStorm",
		"rubymine":                          "RubyMine",
		"clion":                             "CLion",
		"goland":                            "GoLand",
		"rider64.exe":                       "Rider",
		"datagrip":                          "DataGrip",
		"appcode":                           "AppCode",
		"dataspell":                         "DataSpell",
		"aqua":                              "Aqua",
		"gateway":                           "Gateway",
		"fleet":                             "Fleet",
		"androidstudio":                     "Android Studio",
		"/opt/android-studio/bin/studio.sh": "Android Studio",
		"/Applications/Visual Studio Code.app/Contents/MacOS/Electron": "Visual Studio Code",
		"/Applications/PyCharm CE.app/Contents/MacOS/pycharm":          "PyCharm",
		"/Applications/Cursor.app/Contents/MacOS/Cursor":               "Cursor",
		"/Applications/IntelliJ IDEA.app/Contents/MacOS/idea":          "IntelliJ IDEA",
		"/Applications/Android Studio.app/Contents/MacOS/studio":       "Android Studio",
	}
	for name, want := range tests {
		if got, ok := IDEForProcess(name); !ok || got != want {
			t.Errorf("IDEForProcess(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"java", "bash", "codex", "vscode-helper", "studio", "/Applications/iTerm.app/Contents/MacOS/iTerm2", "explorer.exe", ""} {
		if got, ok := IDEForProcess(name); ok {
			t.Errorf("IDEForProcess(%q) = %q, want no IDE", name, got)
		}
	}
}

func TestDetectRunningIDEs(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		lister textLister
		want   []string
	}{
		{textLister{psLinux, parsePS}, []string{"Cursor", "PyCharm", "Visual Studio Code"}},
		{textLister{psMac, parsePS}, []string{"Android Studio", "GoLand", "Visual Studio Code"}},
		{textLister{tasklistWindows, parseTasklist}, []string{"Android Studio", "IntelliJ IDEA", "Visual Studio Code", "Windsurf"}},
		{textLister{"1 0 init\n", parsePS}, nil},
	}
	for _, tt := range tests {
		got, err := DetectRunningIDEs(ctx, tt.lister)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("DetectRunningIDEs (-want +got):\n%s", diff)
		}
	}
	if _, err := DetectRunningIDEs(ctx, textLister{"garbage line\n1 2 x\nmore garbage\n", parsePS}); err == nil {
		t.Error("a lister error was not returned")
	}
}

// TestSystemProcesses runs the real ps (tasklist on Windows) and expects to
// find this test process in the list with its real parent.
func TestSystemProcesses(t *testing.T) {
	procs, err := (systemProcesses{}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(procs, func(p Process) bool { return p.PID == os.Getpid() })
	if i < 0 {
		t.Fatalf("pid %d not in %d processes", os.Getpid(), len(procs))
	}
	if runtime.GOOS != "windows" && procs[i].PPID != os.Getppid() {
		t.Errorf("listed parent %d, want %d", procs[i].PPID, os.Getppid())
	}
	if _, err := DetectRunningIDEs(context.Background(), nil); err != nil {
		t.Errorf("DetectRunningIDEs(system) = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (systemProcesses{}).List(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("List with a cancelled context = %v", err)
	}
}
