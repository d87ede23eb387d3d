package idebridge

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// Process is one entry of the system's process list.
type Process struct {
	PID int `json:"pid"`
	// PPID is the parent's pid; 0 when the list does not say (tasklist).
	PPID int `json:"ppid"`
	// Name is the command name or executable path as the system lists it.
	Name string `json:"name"`
}

// ProcessLister lists the running processes. DetectRunningIDEs uses the
// system's list when given none; tests implement it over fixed text.
type ProcessLister interface {
	// List returns the running processes; ctx bounds running the lister.
	List(ctx context.Context) ([]Process, error)
}

// systemProcesses lists processes with `ps -A -o pid= -o ppid= -o comm=`
// (tasklist /fo csv /nh on Windows).
type systemProcesses struct{}

func (systemProcesses) List(ctx context.Context) ([]Process, error) {
	var name string
	var args []string
	var parse func(string) ([]Process, error)
	if runtime.GOOS == "windows" {
		name, args, parse = "tasklist", []string{"/fo", "csv", "/nh"}, parseTasklist
	} else {
		name, args, parse = "ps", []string{"-A", "-o", "pid=", "-o", "ppid=", "-o", "comm="}, parsePS
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("listing processes with %s: %w (%s)", name, err, strings.TrimSpace(stderr.String()))
	}
	procs, err := parse(stdout.String())
	if err != nil {
		return nil, fmt.Errorf("listing processes with %s: %w", name, err)
	}
	return procs, nil
}

// parsePS parses the output of `ps -A -o pid= -o ppid= -o comm=`: per line
// a pid, a parent pid and the command (which may contain spaces: on macOS
// it is the executable's full path). A header line, if any, is skipped;
// any other line that does not have that shape is an error.
func parsePS(text string) ([]Process, error) {
	var procs []Process
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		pidField, rest := cutField(line)
		ppidField, rest := cutField(rest)
		name := strings.TrimSpace(rest)
		pid, err1 := strconv.Atoi(pidField)
		ppid, err2 := strconv.Atoi(ppidField)
		if err1 != nil || err2 != nil || pid < 0 || ppid < 0 || name == "" {
			if len(procs) == 0 && err1 != nil && !isAllDigits(pidField) {
				continue // a header ("PID PPID COMMAND")
			}
			return procs, fmt.Errorf("ps output line %d: want PID PPID COMMAND, got %q", i+1, line)
		}
		procs = append(procs, Process{PID: pid, PPID: ppid, Name: name})
	}
	return procs, nil
}

// cutField returns the first white-space-separated field of s and the rest
// after it.
func cutField(s string) (field, rest string) {
	s = strings.TrimLeft(s, " \t")
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

func isAllDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseTasklist parses the output of `tasklist /fo csv /nh`: per line
// "Image Name","PID","Session Name","Session#","Mem Usage". Lines that are
// not process rows (a header, an INFO: message) are skipped.
func parseTasklist(text string) ([]Process, error) {
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	var procs []Process
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return procs, nil
		}
		if err != nil {
			return procs, fmt.Errorf("tasklist output: %w", err)
		}
		if len(rec) < 2 {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(rec[1]))
		name := strings.TrimSpace(rec[0])
		if err != nil || pid < 0 || name == "" {
			continue
		}
		procs = append(procs, Process{PID: pid, Name: name})
	}
}

// DetectRunningIDEs returns the names of the IDEs that have a process in
// the list (sorted, each once): the fallback when the environment does not
// say which IDE the agent runs in. lister nil means the system's process
// list: `ps -A -o pid= -o ppid= -o comm=` (`tasklist /fo csv /nh` on
// Windows).
func DetectRunningIDEs(ctx context.Context, lister ProcessLister) ([]string, error) {
	if lister == nil {
		lister = systemProcesses{}
	}
	procs, err := lister.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("detecting running IDEs: %w", err)
	}
	seen := map[string]bool{}
	var names []string
	for _, p := range procs {
		if name, ok := IDEForProcess(p.Name); ok && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// processIDEs maps a process's base name (lower case, without .exe, .sh
// or a trailing 64) to its IDE.
var processIDEs = map[string]string{
	"code":                          "Visual Studio Code",
	"code-insiders":                 "Visual Studio Code",
	"code - insiders":               "Visual Studio Code",
	"visual studio code":            "Visual Studio Code",
	"visual studio code - insiders": "Visual Studio Code",
	"cursor":                        "Cursor",
	"windsurf":                      "Windsurf",
	"androidstudio":                 "Android Studio",
	"android studio":                "Android Studio",
	"intellij idea":                 "IntelliJ IDEA",
	"intellij idea ce":              "IntelliJ IDEA",
	"intellij idea ultimate":        "IntelliJ IDEA",
}

func init() {
	for k, v := range jetBrainsProducts {
		if k != "intellij" {
			processIDEs[k] = v
		}
	}
}

// IDEForProcess names the IDE that a process name from the process list
// belongs to: Code / Visual Studio Code, Cursor, Windsurf, and the
// JetBrains family (idea, pycharm, webstorm, phpstorm, rubymine, clion,
// goland, rider, datagrip, appcode, dataspell, aqua, gateway, fleet,
// Android Studio). name may be a bare command name ("code", "pycharm.sh",
// "idea64.exe") or an executable path; inside a macOS bundle
// (/Applications/Visual Studio Code.app/Contents/...) the bundle names it.
func IDEForProcess(name string) (string, bool) {
	lower := strings.ToLower(name)
	if i := strings.Index(lower, ".app/"); i >= 0 {
		bundle := lower[:i]
		bundle = bundle[strings.LastIndexAny(bundle, "/\\")+1:]
		if ide, ok := processIDEs[bundle]; ok {
			return ide, true
		}
		for key, ide := range bundleProducts {
			if strings.HasPrefix(bundle, key) {
				return ide, true
			}
		}
		return "", false
	}
	base := lower[strings.LastIndexAny(lower, "/\\")+1:]
	for _, suffix := range []string{".exe", ".sh"} {
		base = strings.TrimSuffix(base, suffix)
	}
	if ide, ok := processIDEs[base]; ok {
		return ide, true
	}
	if ide, ok := processIDEs[strings.TrimSuffix(base, "64")]; ok {
		return ide, true
	}
	// Android Studio's launchers are studio.sh and studio64.exe; a bare
	// "studio" counts only on a path that says Android.
	if base == "studio64" || base == "studio" && strings.Contains(lower, "android") {
		return "Android Studio", true
	}
	return "", false
}

// bundleProducts are prefixes of macOS bundle names ("PyCharm CE",
// "GoLand 2024.1") and their IDEs.
var bundleProducts = map[string]string{
	"visual studio code": "Visual Studio Code",
	"intellij idea":      "IntelliJ IDEA",
	"pycharm":            "PyCharm",
	"webstorm":           "WebStorm",
	"phpstorm":           "PhpStorm",
	"rubymine":           "RubyMine",
	"clion":              "CLion",
	"goland":             "GoLand",
	"rider":              "Rider",
	"datagrip":           "DataGrip",
	"appcode":            "AppCode",
	"dataspell":          "DataSpell",
	"aqua":               "Aqua",
	"jetbrains gateway":  "Gateway",
	"fleet":              "Fleet",
	"android studio":     "Android Studio",
}
