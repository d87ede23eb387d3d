package idebridge

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idebridge/idebridge/internal/env"
)

func TestDetectTerminal(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string // nil: an empty environment
		want Terminal
	}{
		{"plain shell", map[string]string{"TERM_PROGRAM": "iTerm.app", "TERM": "xterm"}, Terminal{}},
		{"cursor trace id", map[string]string{"CURSOR_TRACE_ID": "abc", "TERM_PROGRAM": "vscode", "VSCODE_GIT_ASKPASS_MAIN": "/usr/share/code/resources/app/extensions/git/dist/askpass-main.js"},
			Terminal{IDE: "Cursor", Family: FamilyVSCode, Via: "CURSOR_TRACE_ID"}},
		{"vscode askpass", map[string]string{"VSCODE_GIT_ASKPASS_MAIN": "/usr/share/code/resources/app/extensions/git/dist/askpass-main.js", "TERM_PROGRAM": "vscode"},
			Terminal{IDE: "Visual Studio Code", Family: FamilyVSCode, Via: "VSCODE_GIT_ASKPASS_MAIN"}},
		{"vscode on windows", map[string]string{"VSCODE_GIT_ASKPASS_MAIN": `c:\Users\me\AppData\Local\Programs\Microsoft VS Code\resources\app\extensions\git\dist\askpass-main.js`},
			Terminal{IDE: "Visual Studio Code", Family: FamilyVSCode, Via: "VSCODE_GIT_ASKPASS_MAIN"}},
		{"cursor askpass", map[string]string{"VSCODE_GIT_ASKPASS_MAIN": "/Applications/Cursor.app/Contents/Resources/app/extensions/git/dist/askpass-main.js"},
			Terminal{IDE: "Cursor", Family: FamilyVSCode, Via: "VSCODE_GIT_ASKPASS_MAIN"}},
		{"windsurf remote server", map[string]string{"VSCODE_GIT_ASKPASS_MAIN": "/home/me/.windsurf-server/bin/123/extensions/git/dist/askpass-main.js"},
			Terminal{IDE: "Windsurf", Family: FamilyVSCode, Via: "VSCODE_GIT_ASKPASS_MAIN"}},
		{"cursor remote server", map[string]string{"VSCODE_GIT_ASKPASS_MAIN": "/home/me/.cursor-server/bin/123/extensions/git/dist/askpass-main.js"},
			Terminal{IDE: "Cursor", Family: FamilyVSCode, Via: "VSCODE_GIT_ASKPASS_MAIN"}},
		{"vscodium", map[string]string{"VSCODE_GIT_ASKPASS_MAIN": "/opt/vscodium/resources/app/extensions/git/dist/askpass-main.js"},
			Terminal{IDE: "VSCodium", Family: FamilyVSCode, Via: "VSCODE_GIT_ASKPASS_MAIN"}},
		{"jetbrains", map[string]string{"TERMINAL_EMULATOR": "JetBrains-JediTerm"},
			Terminal{IDE: "JetBrains", Family: FamilyJetBrains, Via: "TERMINAL_EMULATOR"}},
		{"jetbrains refined by bundle", map[string]string{"TERMINAL_EMULATOR": "JetBrains-JediTerm", "__CFBundleIdentifier": "com.jetbrains.pycharm.ce"},
			Terminal{IDE: "PyCharm", Family: FamilyJetBrains, Via: "TERMINAL_EMULATOR"}},
		{"bundle vscode", map[string]string{"__CFBundleIdentifier": "com.microsoft.VSCode"},
			Terminal{IDE: "Visual Studio Code", Family: FamilyVSCode, Via: "__CFBundleIdentifier"}},
		{"bundle cursor", map[string]string{"__CFBundleIdentifier": "com.todesktop.230313mzl4w4u92"},
			Terminal{IDE: "Cursor", Family: FamilyVSCode, Via: "__CFBundleIdentifier"}},
		{"bundle windsurf", map[string]string{"__CFBundleIdentifier": "com.exafunction.windsurf"},
			Terminal{IDE: "Windsurf", Family: FamilyVSCode, Via: "__CFBundleIdentifier"}},
		{"bundle android studio", map[string]string{"__CFBundleIdentifier": "com.google.android.studio"},
			Terminal{IDE: "Android Studio", Family: FamilyJetBrains, Via: "__CFBundleIdentifier"}},
		{"bundle goland", map[string]string{"__CFBundleIdentifier": "com.jetbrains.goland"},
			Terminal{IDE: "GoLand", Family: FamilyJetBrains, Via: "__CFBundleIdentifier"}},
		{"bundle unknown jetbrains", map[string]string{"__CFBundleIdentifier": "com.jetbrains.newthing"},
			Terminal{IDE: "JetBrains", Family: FamilyJetBrains, Via: "__CFBundleIdentifier"}},
		{"bundle terminal app", map[string]string{"__CFBundleIdentifier": "com.apple.Terminal"}, Terminal{}},
		{"term program vscode", map[string]string{"TERM_PROGRAM": "vscode"},
			Terminal{IDE: "Visual Studio Code", Family: FamilyVSCode, Via: "TERM_PROGRAM"}},
		{"wsl plain", map[string]string{"WSL_DISTRO_NAME": "Ubuntu-22.04"}, Terminal{WSL: true, Distro: "Ubuntu-22.04"}},
		{"wsl in vscode", map[string]string{"WSL_DISTRO_NAME": "Ubuntu", "TERM_PROGRAM": "vscode"},
			Terminal{IDE: "Visual Studio Code", Family: FamilyVSCode, Via: "TERM_PROGRAM", WSL: true, Distro: "Ubuntu"}},
		{"empty values are unset", map[string]string{"CURSOR_TRACE_ID": "", "WSL_DISTRO_NAME": ""}, Terminal{}},
		{"no variables", nil, Terminal{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DetectTerminal(env.FromMap(tt.env))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DetectTerminal (-want +got):\n%s", diff)
			}
			if got.InIDE() != (tt.want.Family != "") {
				t.Errorf("InIDE = %v", got.InIDE())
			}
		})
	}
}

// TestDetectTerminalEnviron checks the os.Environ form: the last of a
// repeated variable wins (as exec.Cmd does), and nil is the process's own
// environment.
func TestDetectTerminalEnviron(t *testing.T) {
	if got := DetectTerminal([]string{"TERM_PROGRAM=vscode", "TERM_PROGRAM=iTerm.app"}); got.InIDE() {
		t.Errorf("the last TERM_PROGRAM is iTerm.app, got %+v", got)
	}
	if got := DetectTerminal([]string{"TERM_PROGRAM=iTerm.app", "TERM_PROGRAM=vscode"}); got.Via != "TERM_PROGRAM" {
		t.Errorf("the last TERM_PROGRAM is vscode, got %+v", got)
	}
	for _, k := range []string{"CURSOR_TRACE_ID", "VSCODE_GIT_ASKPASS_MAIN", "TERMINAL_EMULATOR", "__CFBundleIdentifier"} {
		t.Setenv(k, "")
	}
	t.Setenv("TERM_PROGRAM", "vscode")
	t.Setenv(EnvWSLDistro, "Ubuntu")
	want := Terminal{IDE: "Visual Studio Code", Family: FamilyVSCode, Via: "TERM_PROGRAM", WSL: true, Distro: "Ubuntu"}
	if got := DetectTerminal(nil); got != want {
		t.Errorf("DetectTerminal(nil) = %+v, want the process's environment: %+v", got, want)
	}
	if got := DetectTerminal([]string{}); got != (Terminal{}) {
		t.Errorf("DetectTerminal(empty) = %+v: an empty environment must not fall back to the process's", got)
	}
}
