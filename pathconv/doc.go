// Package pathconv converts file paths and host addresses between the IDE's
// view and the agent's view. They differ only when the agent runs inside WSL
// and the IDE on Windows: the IDE says C:\Users\me\p, the agent sees
// /mnt/c/Users/me/p; the IDE's files under \\wsl$\Ubuntu\home\me are the
// agent's /home/me; and the IDE listens on the Windows host, not on the
// agent's 127.0.0.1.
//
// Most callers need one converter per IDE connection:
//
//	var conv pathconv.Converter = pathconv.Identity{}
//	if ideRunsInWindows && os.Getenv("WSL_DISTRO_NAME") != "" {
//		conv = pathconv.NewWSL(os.Getenv("WSL_DISTRO_NAME"), &pathconv.WSLOptions{
//			WSLPath: pathconv.SystemWSLPath(), // nil when wslpath is not installed
//		})
//	}
//	local := conv.ToLocal(`C:\Users\me\p\main.go`) // /mnt/c/Users/me/p/main.go
//
// and the IDE's address from WindowsHost. The pure functions
// (WindowsHostFromRoute, WindowsHostFromResolvConf, the WSL converter
// without wslpath) do no I/O. Everything that reads the environment takes
// it in os.Environ form (nil: the process's own). The package uses the
// standard library only (and the module's internal/env), and is safe for
// concurrent use.
package pathconv
