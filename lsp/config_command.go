package lsp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/idebridge/idebridge/internal/env"
)

// ResolveCommand returns the executable the configuration's Command
// starts, found as the manager finds it: a bare name in the absolute
// directories of the PATH of the server's environment (environ in
// os.Environ form, nil for the process's, with the configuration's Env on
// top), a relative path against Root, the plugin's directory. A missing
// command is an error matching exec.ErrNotFound.
func (c *ServerConfig) ResolveCommand(environ []string) (string, error) {
	name := c.Command
	if name == "" {
		return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
	if strings.ContainsAny(name, `/\`) {
		p := commandIn(c.Root, name)
		if !filepath.IsAbs(p) {
			return "", &exec.Error{Name: name, Err: fmt.Errorf("a relative path needs the plugin directory (Root) to resolve against: %w", exec.ErrNotFound)}
		}
		if !isExecutable(p) {
			if _, err := os.Stat(p); err == nil {
				return "", &exec.Error{Name: name, Err: fmt.Errorf("%s is not an executable file: %w", p, exec.ErrNotFound)}
			}
			return "", &exec.Error{Name: name, Err: fmt.Errorf("%s does not exist: %w", p, exec.ErrNotFound)}
		}
		return p, nil
	}
	path, ok := c.Env["PATH"]
	if !ok {
		path = env.Get(environ, "PATH")
	}
	if runtime.GOOS == "windows" {
		return exec.LookPath(name)
	}
	return lookPathIn(name, path)
}

// installHints says how the commands of well-known language servers are
// usually installed.
var installHints = map[string]string{
	"gopls":                         GoplsInstallCommand,
	"pyright-langserver":            "npm install -g pyright (or pip install pyright)",
	"basedpyright-langserver":       "pip install basedpyright",
	"typescript-language-server":    "npm install -g typescript-language-server typescript",
	"clangd":                        "install clangd with your package manager (apt install clangd; brew install llvm)",
	"rust-analyzer":                 "rustup component add rust-analyzer",
	"lua-language-server":           "install lua-language-server with your package manager (brew install lua-language-server)",
	"intelephense":                  "npm install -g intelephense",
	"csharp-ls":                     "dotnet tool install --global csharp-ls",
	"jdtls":                         "install jdtls with your package manager (brew install jdtls)",
	"ruby-lsp":                      "gem install ruby-lsp",
	"sourcekit-lsp":                 "sourcekit-lsp comes with Xcode and the Swift toolchain",
	"bash-language-server":          "npm install -g bash-language-server",
	"yaml-language-server":          "npm install -g yaml-language-server",
	"vscode-json-language-server":   "npm install -g vscode-langservers-extracted",
	"vscode-css-language-server":    "npm install -g vscode-langservers-extracted",
	"vscode-html-language-server":   "npm install -g vscode-langservers-extracted",
	"vscode-eslint-language-server": "npm install -g vscode-langservers-extracted",
}

// InstallHint says how a language server's command is usually installed,
// e.g. "npm install -g typescript-language-server typescript"; "" when
// the command is not a well-known server.
func InstallHint(command string) string {
	base := filepath.Base(filepath.ToSlash(command))
	base = strings.TrimSuffix(base, ".exe")
	return installHints[base]
}
