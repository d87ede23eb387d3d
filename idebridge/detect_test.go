package idebridge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDetectTerminal(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
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
		{"nil env", nil, Terminal{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DetectTerminal(tt.env)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DetectTerminal (-want +got):\n%s", diff)
			}
			if got.InIDE() != (tt.want.Family != "") {
				t.Errorf("InIDE = %v", got.InIDE())
			}
		})
	}
}

func TestIsTruthy(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "true": true, "TRUE": true, " true ": true, "0": false, "false": false, "": false, "yes": false} {
		if got := isTruthy(v); got != want {
			t.Errorf("isTruthy(%q) = %v", v, got)
		}
	}
}
