// Package lockfile reads, validates, scans and writes the lockfiles through
// which IDE extensions announce their MCP servers to coding agents
// (~/.claude/ide/<port>.lock).
//
// An agent looks in the directories returned by Dirs, reads every lockfile
// there with Scan (newest first, each with its parse or permission error),
// and keeps those whose workspace folders contain its working directory
// (Match):
//
//	for _, r := range lockfile.Scan(lockfile.Dirs(nil, nil), nil) {
//		if r.Err == nil && lockfile.Match(r.Lockfile.WorkspaceFolders, cwd, nil) {
//			fmt.Println(r.Lockfile.Port, r.Lockfile.IDEName)
//		}
//	}
//
// Package idebridge builds discovery (pid, ancestry and TCP checks, WSL
// hosts) on top of this; most agents want idebridge.Discover instead.
// IDE authors and tests use Write and Remove.
//
// Reading is careful about who wrote a file: by default Scan refuses a
// lockfile, or a directory, that another user owns or that group or others
// may write, because a planted lockfile would point the agent at someone
// else's server (and hand it the agent's edits).
//
// Everything that reads the environment takes it in os.Environ form
// ("KEY=value" strings; nil means the process's own), and every path can be
// redirected through options, so tests never touch the real home
// directory. All functions are safe for concurrent use.
package lockfile
