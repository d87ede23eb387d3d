package lockfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/idebridge/idebridge/lockfile"
)

// An IDE writes its lockfile; an agent finds it and checks that it covers
// the agent's working directory.
func Example() {
	config, _ := os.MkdirTemp("", "claude-config")
	defer os.RemoveAll(config)
	env := []string{"CLAUDE_CONFIG_DIR=" + config} // os.Environ form; nil is the process's

	// The IDE side.
	dir, _ := lockfile.Dir(env, nil)
	path, _ := lockfile.Write(dir, &lockfile.Lockfile{
		Port:             41234,
		PID:              os.Getpid(),
		IDEName:          "Visual Studio Code",
		Transport:        lockfile.TransportWS,
		WorkspaceFolders: []string{"/home/dev/proj"},
		AuthToken:        "secret",
	})
	defer lockfile.Remove(path)

	// The agent side.
	for _, r := range lockfile.Scan(lockfile.Dirs(env, nil), nil) {
		if r.Err != nil {
			fmt.Println("unusable:", r.Err)
			continue
		}
		fmt.Println(filepath.Base(r.Path), r.Lockfile.IDEName, r.Lockfile.Transport,
			lockfile.Match(r.Lockfile.WorkspaceFolders, "/home/dev/proj/cmd", nil))
	}
	// Output:
	// 41234.lock Visual Studio Code ws true
}

func ExampleParse() {
	// The legacy format: one workspace folder a line, SSE, no pid.
	lf, err := lockfile.Parse("8080.lock", []byte("/home/dev/a\n/home/dev/b\n"))
	fmt.Println(lf.Port, lf.Legacy, lf.Transport, lf.WorkspaceFolders, err)

	// The current format; slashes may be escaped.
	lf, err = lockfile.Parse("8081.lock", []byte(`{"pid":7,"workspaceFolders":["\/home\/dev"],"transport":"ws"}`))
	fmt.Println(lf.Port, lf.Legacy, lf.Transport, lf.WorkspaceFolders, lf.PID, err)

	_, err = lockfile.Parse("/ide/8082.lock", []byte(`{"pid":"7"}`))
	fmt.Println(err)
	// Output:
	// 8080 true sse [/home/dev/a /home/dev/b] <nil>
	// 8081 false ws [/home/dev] 7 <nil>
	// parsing lockfile /ide/8082.lock: field "pid" is not a number
}

func ExampleMatch() {
	folders := []string{"/home/dev/proj"}
	fmt.Println(lockfile.Match(folders, "/home/dev/proj/internal", nil))
	fmt.Println(lockfile.Match(folders, "/home/dev/project", nil))
	fmt.Println(lockfile.Match([]string{`c:\work`}, `C:\work\src`, nil))
	// Output:
	// true
	// false
	// true
}
