package idebridge_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lockfile"
)

// An IDE announces itself with a lockfile; Discover finds it and checks it
// against the working directory, its pid and its port.
func ExampleDiscover() {
	config, _ := os.MkdirTemp("", "claude-config")
	defer os.RemoveAll(config)
	project := filepath.Join(config, "project")
	os.Mkdir(project, 0o700)

	// A stand-in for the IDE's MCP server.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	lockfile.Write(filepath.Join(config, "ide"), &lockfile.Lockfile{
		Port:             ln.Addr().(*net.TCPAddr).Port,
		PID:              os.Getpid(),
		IDEName:          "Visual Studio Code",
		Transport:        lockfile.TransportWS,
		WorkspaceFolders: []string{project},
	})

	cands, err := idebridge.Discover(context.Background(), &idebridge.DiscoverOptions{
		Cwd: project,
		Env: []string{"CLAUDE_CONFIG_DIR=" + config}, // os.Environ form; nil: the real environment
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cands {
		fmt.Println(c.IDEName, c.Transport, c.Valid, c.Reasons)
	}
	if valid := idebridge.ValidCandidates(cands); len(valid) == 1 {
		fmt.Println("auto-connect to", valid[0].IDEName)
	}
	// Output:
	// Visual Studio Code ws true []
	// auto-connect to Visual Studio Code
}

func ExampleDetectTerminal() {
	t := idebridge.DetectTerminal([]string{ // os.Environ form; nil: the real environment
		"TERM_PROGRAM=vscode",
		"VSCODE_GIT_ASKPASS_MAIN=/Applications/Cursor.app/Contents/Resources/app/extensions/git/dist/askpass-main.js",
		"WSL_DISTRO_NAME=",
	})
	fmt.Println(t.IDE, t.Family, t.Via, t.InIDE())
	// Output: Cursor vscode VSCODE_GIT_ASKPASS_MAIN true
}

// The environment decides whether an agent connects to an IDE on its own.
func ExampleShouldAutoConnect() {
	env := []string{"TERM_PROGRAM=vscode"}
	fmt.Println(idebridge.ShouldAutoConnect(nil, env))
	env = append(env, "CLAUDE_CODE_AUTO_CONNECT_IDE=0")
	fmt.Println(idebridge.ShouldAutoConnect(nil, env))
	// Output:
	// true running in Visual Studio Code's terminal (TERM_PROGRAM)
	// false CLAUDE_CODE_AUTO_CONNECT_IDE=0 turns auto-connect off
}

// An agent connects to the IDE whose workspace holds its project, with
// the options of the common case: nothing about the rules that decide
// when to auto-connect, nor about discovery.
func ExampleAutoConnect() {
	ctx := context.Background()
	config, _ := os.MkdirTemp("", "claude-config")
	defer os.RemoveAll(config)
	project := filepath.Join(config, "project")
	os.Mkdir(project, 0o700)

	// The user's editor: a headless IDE announcing itself with a lockfile.
	ide, _ := ideserver.New(&ideserver.Options{
		WorkspaceFolders: []string{project},
		LockfileDir:      filepath.Join(config, "ide"),
		IDEName:          "Visual Studio Code",
	})
	if err := ide.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer ide.Close()

	opts := idebridge.NewAutoConnectOptions(project) // "": the working directory
	// Only for this example: the lockfiles are under a temporary
	// CLAUDE_CONFIG_DIR. An agent leaves Env nil (its own environment).
	opts.Discover.Env = []string{"CLAUDE_CONFIG_DIR=" + config}
	if ok, _ := idebridge.ShouldAutoConnect(opts, nil); !ok {
		return
	}
	client, cand, err := idebridge.AutoConnect(ctx, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	fmt.Println("connected to", cand.IDEName)
	// Output: connected to Visual Studio Code
}
