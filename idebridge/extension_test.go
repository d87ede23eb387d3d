package idebridge_test

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/mcp"
)

// scriptedRunner plays an editor's command-line tool: each command line
// ("code --list-extensions") gets its canned output or error.
type scriptedRunner struct {
	out  map[string]string
	errs map[string]error
	ran  []string
}

func (r *scriptedRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	line := strings.Join(append([]string{name}, args...), " ")
	r.ran = append(r.ran, line)
	if err := r.errs[line]; err != nil {
		return nil, err
	}
	out, ok := r.out[line]
	if !ok {
		return nil, &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
	return []byte(out), nil
}

func TestCheckExtension(t *testing.T) {
	vscode := idebridge.Terminal{IDE: "Visual Studio Code", Family: idebridge.FamilyVSCode, Via: "TERM_PROGRAM"}
	cursor := idebridge.Terminal{IDE: "Cursor", Family: idebridge.FamilyVSCode, Via: "CURSOR_TRACE_ID"}
	pycharm := idebridge.Terminal{IDE: "PyCharm", Family: idebridge.FamilyJetBrains, Via: "__CFBundleIdentifier"}
	jetbrains := idebridge.Terminal{IDE: "JetBrains", Family: idebridge.FamilyJetBrains, Via: "TERMINAL_EMULATOR"}
	lock := func(name string) []idebridge.Candidate { return []idebridge.Candidate{{Port: 1, IDEName: name}} }
	notListed := "ms-python.python\ngolang.go\n"
	listed := "golang.go@0.48.0\nAnthropic.claude-code@2.1.100\n"

	tests := []struct {
		name    string
		term    idebridge.Terminal
		cands   []idebridge.Candidate
		opts    idebridge.ExtensionOptions
		runner  *scriptedRunner
		want    idebridge.ExtensionReport
		ran     []string
		advice  string // a substring of Advice
		wantErr bool
	}{
		{name: "outside an IDE", want: idebridge.ExtensionReport{}},
		{
			name: "its lockfile exists", term: vscode, cands: lock("Visual Studio Code"),
			want: idebridge.ExtensionReport{IDE: "Visual Studio Code", Family: "vscode", HasLockfile: true},
		},
		{
			name: "another editor's lockfile does not count", term: cursor, cands: lock("Visual Studio Code"),
			runner: &scriptedRunner{out: map[string]string{"cursor --list-extensions": notListed}},
			want:   idebridge.ExtensionReport{IDE: "Cursor", Family: "vscode", CLI: "cursor", Listed: true},
			ran:    []string{"cursor --list-extensions"},
			advice: "run `cursor --install-extension anthropic.claude-code`",
		},
		{
			name: "installed but not running", term: vscode,
			runner: &scriptedRunner{out: map[string]string{"code --list-extensions": listed}},
			want:   idebridge.ExtensionReport{IDE: "Visual Studio Code", Family: "vscode", CLI: "code", Listed: true, Installed: true},
			ran:    []string{"code --list-extensions"},
			advice: "reload the window",
		},
		{
			name: "install on request", term: cursor, opts: idebridge.ExtensionOptions{Install: true, Env: []string{}},
			runner: &scriptedRunner{out: map[string]string{"cursor --list-extensions": notListed, "cursor --install-extension anthropic.claude-code": "Extension 'anthropic.claude-code' was successfully installed.\n"}},
			want:   idebridge.ExtensionReport{IDE: "Cursor", Family: "vscode", CLI: "cursor", Listed: true, InstallAttempted: true, NowInstalled: true},
			ran:    []string{"cursor --list-extensions", "cursor --install-extension anthropic.claude-code"},
			advice: "Installed",
		},
		{
			name: "never when CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL is set", term: vscode,
			opts:   idebridge.ExtensionOptions{Install: true, Env: []string{"CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL=1"}},
			runner: &scriptedRunner{out: map[string]string{"code --list-extensions": notListed}},
			want:   idebridge.ExtensionReport{IDE: "Visual Studio Code", Family: "vscode", CLI: "code", Listed: true, InstallSkipped: true},
			ran:    []string{"code --list-extensions"},
			advice: "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL",
		},
		{
			name: "a falsy skip value does not skip", term: vscode,
			opts:   idebridge.ExtensionOptions{Install: true, Env: []string{"CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL=false"}},
			runner: &scriptedRunner{out: map[string]string{"code --list-extensions": "", "code --install-extension anthropic.claude-code": ""}},
			want:   idebridge.ExtensionReport{IDE: "Visual Studio Code", Family: "vscode", CLI: "code", Listed: true, InstallAttempted: true, NowInstalled: true},
			ran:    []string{"code --list-extensions", "code --install-extension anthropic.claude-code"},
		},
		{
			name: "the editor's command line is missing", term: vscode, opts: idebridge.ExtensionOptions{Install: true, Env: []string{}},
			runner: &scriptedRunner{},
			want:   idebridge.ExtensionReport{IDE: "Visual Studio Code", Family: "vscode", CLI: "code"},
			ran:    []string{"code --list-extensions"},
			advice: "`code --list-extensions` failed",
		},
		{
			name: "the install fails", term: vscode, opts: idebridge.ExtensionOptions{Install: true, Env: []string{}},
			runner: &scriptedRunner{out: map[string]string{"code --list-extensions": notListed}, errs: map[string]error{"code --install-extension anthropic.claude-code": errors.New("exit status 1: offline")}},
			want:   idebridge.ExtensionReport{IDE: "Visual Studio Code", Family: "vscode", CLI: "code", Listed: true, InstallAttempted: true},
			ran:    []string{"code --list-extensions", "code --install-extension anthropic.claude-code"},
			advice: "Installing the Claude Code extension failed", wantErr: true,
		},
		{
			name: "JetBrains: the marketplace page", term: pycharm, opts: idebridge.ExtensionOptions{Install: true},
			runner: &scriptedRunner{},
			want:   idebridge.ExtensionReport{IDE: "PyCharm", Family: "jetbrains", MarketplaceURL: idebridge.JetBrainsPluginURL},
			advice: idebridge.JetBrainsPluginURL,
		},
		{
			name: "JetBrains product unknown: any JetBrains lockfile", term: jetbrains, cands: lock("PyCharm"),
			want: idebridge.ExtensionReport{IDE: "JetBrains", Family: "jetbrains", HasLockfile: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			if tt.runner != nil {
				opts.Runner = tt.runner
			} else {
				opts.Runner = &scriptedRunner{}
			}
			rep, err := idebridge.CheckExtension(context.Background(), tt.term, tt.cands, &opts)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v", err)
			}
			if !strings.Contains(rep.Advice, tt.advice) {
				t.Errorf("advice %q lacks %q", rep.Advice, tt.advice)
			}
			if tt.advice == "" && (tt.want.HasLockfile || tt.term.Family == "") && rep.Advice != "" {
				t.Errorf("advice %q when nothing is needed", rep.Advice)
			}
			got := *rep
			got.Advice = ""
			if got != tt.want {
				t.Errorf("report\n %+v\nwant\n %+v", got, tt.want)
			}
			var ran []string
			if r, ok := opts.Runner.(*scriptedRunner); ok {
				ran = r.ran
			}
			if !slices.Equal(ran, tt.ran) {
				t.Errorf("ran %q, want %q", ran, tt.ran)
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
		ok   bool
	}{
		{"1.2.3", "1.2.3", 0, true},
		{"v1.2.3", "1.2.3", 0, true},
		{"1.2", "1.2.0", 0, true},
		{"1.2.10", "1.2.9", 1, true},
		{"0.2.0", "0.10.0", -1, true},
		{"2.0.0", "10.0.0", -1, true},
		{"1.0.0-beta.1", "1.0.0", -1, true},
		{"1.0.0-beta.2", "1.0.0-beta.10", -1, true},
		{"1.0.0-alpha", "1.0.0-beta", -1, true},
		{"1.0.0-1", "1.0.0-alpha", -1, true},
		{"1.0.0-alpha", "1.0.0-alpha.1", -1, true},
		{"1.0.0+build.5", "1.0.0", 0, true},
		{"", "1.0.0", 0, false},
		{"devel", "1.0.0", 0, false},
		{"1.x", "1.0", 0, false},
	}
	for _, tt := range tests {
		got, ok := idebridge.CompareVersions(tt.a, tt.b)
		if got != tt.want || ok != tt.ok {
			t.Errorf("CompareVersions(%q, %q) = %d, %v; want %d, %v", tt.a, tt.b, got, ok, tt.want, tt.ok)
		}
		if tt.ok {
			if back, _ := idebridge.CompareVersions(tt.b, tt.a); back != -tt.want {
				t.Errorf("CompareVersions(%q, %q) = %d, not the opposite", tt.b, tt.a, back)
			}
		}
	}
}

func TestCheckServerVersion(t *testing.T) {
	neovim := mcp.Implementation{Name: "claudecode-neovim", Version: "0.2.0"}
	if vc := idebridge.CheckServerVersion(neovim, "0.3.0"); !vc.Older || vc.Unknown || !strings.Contains(vc.Message, "claudecode-neovim 0.2.0 is older than 0.3.0") {
		t.Errorf("older: %+v", vc)
	}
	if vc := idebridge.CheckServerVersion(neovim, "0.2.0"); vc.Older || vc.Unknown || vc.Message != "" {
		t.Errorf("same: %+v", vc)
	}
	if vc := idebridge.CheckServerVersion(mcp.Implementation{Name: "x"}, "1.0"); vc.Older || !vc.Unknown {
		t.Errorf("no version: %+v", vc)
	}
}
