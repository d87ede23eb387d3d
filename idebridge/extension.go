package idebridge

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/idebridge/idebridge/internal/env"
	"github.com/idebridge/idebridge/mcp"
)

// Extension facts.
const (
	// ExtensionID is the Claude Code extension of VS Code family editors.
	ExtensionID = "anthropic.claude-code"
	// JetBrainsPluginURL is the JetBrains Marketplace page of the Claude
	// Code plugin, which JetBrains IDEs install from their settings.
	JetBrainsPluginURL = "https://plugins.jetbrains.com/plugin/27310-claude-code-beta-"
	// EnvSkipAutoInstall, when set to anything but a falsy value, forbids
	// installing the extension automatically.
	EnvSkipAutoInstall = "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL"
)

// CommandRunner runs an editor's command-line tool. ExtensionOptions.Runner
// nil means os/exec with the command looked up in PATH; tests implement it
// without any editor installed.
type CommandRunner interface {
	// Run runs name with args and returns its standard output; a
	// command that fails or cannot be found is an error. ctx bounds the
	// run.
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// systemRunner runs commands with os/exec, looked up in PATH.
type systemRunner struct{}

func (systemRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return stdout.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, truncateText(msg, 300))
		}
		return stdout.Bytes(), fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return stdout.Bytes(), nil
}

// editorCLIs maps the VS Code family editors DetectTerminal names to their
// command-line tools.
var editorCLIs = map[string]string{
	"Visual Studio Code": "code",
	"Cursor":             "cursor",
	"Windsurf":           "windsurf",
	"VSCodium":           "codium",
}

// ExtensionOptions configure CheckExtension. A nil *ExtensionOptions, and
// every zero field, means the documented default.
type ExtensionOptions struct {
	// Install asks CheckExtension to install the extension through the
	// editor's command line when it is missing (never when
	// CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL is set).
	Install bool
	// Env is the environment (CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL) in
	// os.Environ form. Nil means the process's environment.
	Env []string
	// Runner runs the editor's command-line tool. Nil means os/exec, the
	// command looked up in PATH.
	Runner CommandRunner
}

// ExtensionReport says whether the editor the agent runs in lacks its
// Claude Code extension, and what was or can be done about it.
type ExtensionReport struct {
	// IDE and Family are the editor (see Terminal); empty outside one.
	IDE    string `json:"ide,omitempty"`
	Family string `json:"family,omitempty"`
	// HasLockfile is true when a lockfile of that editor was found: its
	// extension runs, and nothing needs installing.
	HasLockfile bool `json:"hasLockfile"`
	// CLI is the editor's command-line tool (VS Code family).
	CLI string `json:"cli,omitempty"`
	// Listed is true when `CLI --list-extensions` ran; Installed then
	// says whether the extension was listed.
	Listed    bool `json:"listed"`
	Installed bool `json:"installed"`
	// InstallAttempted and InstallSkipped say what became of an Install
	// request: skipped because CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL is set.
	InstallAttempted bool `json:"installAttempted,omitempty"`
	InstallSkipped   bool `json:"installSkipped,omitempty"`
	// NowInstalled is true when the install succeeded.
	NowInstalled bool `json:"nowInstalled,omitempty"`
	// Advice tells a person what to do; "" when nothing is needed.
	Advice string `json:"advice,omitempty"`
	// MarketplaceURL is the plugin's page (JetBrains).
	MarketplaceURL string `json:"marketplaceURL,omitempty"`
}

// CheckExtension reports whether the editor described by term (see
// DetectTerminal) runs without its Claude Code extension: it has none of
// the lockfiles in cands (discovered candidates, valid or not). For a VS
// Code family editor it runs `<cli> --list-extensions` to tell "not
// installed" from "installed but not running", and with opts.Install
// runs `<cli> --install-extension anthropic.claude-code` when it is not
// installed, unless CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL is set. For a
// JetBrains IDE it reports the Marketplace page: those install plugins
// from their own settings. Outside an IDE, or when the editor's lockfile
// exists, the report says nothing is needed.
//
// The error is non-nil only when the install was attempted and failed
// (the report says what happened up to then); a command-line tool that
// cannot be run makes the report advise doing it by hand.
func CheckExtension(ctx context.Context, term Terminal, cands []Candidate, opts *ExtensionOptions) (*ExtensionReport, error) {
	var o ExtensionOptions
	if opts != nil {
		o = *opts
	}
	if o.Runner == nil {
		o.Runner = systemRunner{}
	}
	rep := &ExtensionReport{IDE: term.IDE, Family: term.Family}
	if !term.InIDE() {
		return rep, nil
	}
	for _, c := range cands {
		if lockfileOf(term, c) {
			rep.HasLockfile = true
			return rep, nil
		}
	}
	if term.Family == FamilyJetBrains {
		rep.MarketplaceURL = JetBrainsPluginURL
		rep.Advice = fmt.Sprintf("%s has no Claude Code plugin running: install \"Claude Code\" from Settings > Plugins > Marketplace (%s), then restart the IDE.", term.IDE, JetBrainsPluginURL)
		return rep, nil
	}
	cli := editorCLIs[term.IDE]
	if cli == "" {
		cli = "code"
	}
	rep.CLI = cli
	byHand := fmt.Sprintf("run `%s --install-extension %s`, or install \"Claude Code\" from the Extensions view; then restart the terminal", cli, ExtensionID)

	out, err := o.Runner.Run(ctx, cli, "--list-extensions")
	if err != nil {
		rep.Advice = fmt.Sprintf("%s has no Claude Code extension running, and `%s --list-extensions` failed (%v): %s.", term.IDE, cli, err, byHand)
		return rep, nil
	}
	rep.Listed = true
	rep.Installed = extensionListed(string(out), ExtensionID)
	if rep.Installed {
		rep.Advice = fmt.Sprintf("The Claude Code extension is installed in %s but not running in this window: reload the window (Developer: Reload Window) or restart %s, and run the agent in a terminal of a window that has the project open.", term.IDE, term.IDE)
		return rep, nil
	}
	if !o.Install {
		rep.Advice = fmt.Sprintf("%s does not have the Claude Code extension: %s.", term.IDE, byHand)
		return rep, nil
	}
	if v, ok := env.Lookup(o.Env, EnvSkipAutoInstall); ok && !env.Falsy(v) {
		rep.InstallSkipped = true
		rep.Advice = fmt.Sprintf("%s does not have the Claude Code extension, and %s forbids installing it automatically: %s.", term.IDE, EnvSkipAutoInstall, byHand)
		return rep, nil
	}
	rep.InstallAttempted = true
	if _, err := o.Runner.Run(ctx, cli, "--install-extension", ExtensionID); err != nil {
		rep.Advice = fmt.Sprintf("Installing the Claude Code extension failed: %s.", byHand)
		return rep, fmt.Errorf("installing %s in %s: %w", ExtensionID, term.IDE, err)
	}
	rep.NowInstalled = true
	rep.Advice = fmt.Sprintf("Installed the Claude Code extension in %s: reload the window (or restart %s) to start it.", term.IDE, term.IDE)
	return rep, nil
}

// lockfileOf reports whether candidate c is a lockfile of the editor term
// names. Lockfiles name the editor as DetectTerminal does ("Visual Studio
// Code", "Cursor", ...); a JetBrains terminal whose product is unknown
// matches any JetBrains lockfile.
func lockfileOf(term Terminal, c Candidate) bool {
	if c.IDEName == "" {
		return false
	}
	if strings.EqualFold(c.IDEName, term.IDE) {
		return true
	}
	if term.Family == FamilyJetBrains && term.IDE == "JetBrains" {
		if strings.EqualFold(c.IDEName, "Android Studio") || strings.Contains(strings.ToLower(c.IDEName), "jetbrains") {
			return true
		}
		for _, name := range jetBrainsProducts {
			if strings.EqualFold(name, c.IDEName) {
				return true
			}
		}
	}
	return false
}

// extensionListed reports whether the output of `code --list-extensions`
// (one extension id a line, optionally id@version with --show-versions)
// lists id. Ids compare without regard to case, as the marketplace does.
func extensionListed(output, id string) bool {
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimSpace(line)
		if at := strings.IndexByte(line, '@'); at > 0 {
			line = line[:at]
		}
		if line != "" && strings.EqualFold(line, id) {
			return true
		}
	}
	return false
}

// VersionCheck is the outcome of comparing the IDE's reported version with
// a minimum.
type VersionCheck struct {
	// Server is the IDE's serverInfo name; Version its version.
	Server, Version string
	// Minimum is the version compared against.
	Minimum string
	// Older is true when Version is older than Minimum.
	Older bool
	// Unknown is true when either version could not be read; no warning.
	Unknown bool
	// Message is a sentence for a person when Older or Unknown.
	Message string
}

// CheckVersion compares the version the IDE reported in its initialize
// answer (serverInfo.version) with minimum. It never refuses anything: an
// older IDE still works for what it supports; the caller warns.
func (c *Client) CheckVersion(minimum string) VersionCheck {
	return CheckServerVersion(c.ServerInfo(), minimum)
}

// CheckServerVersion compares info.Version with minimum; see
// Client.CheckVersion and CompareVersions.
func CheckServerVersion(info mcp.Implementation, minimum string) VersionCheck {
	vc := VersionCheck{Server: info.Name, Version: info.Version, Minimum: minimum}
	name := info.Name
	if name == "" {
		name = "the IDE extension"
	}
	cmp, ok := CompareVersions(info.Version, minimum)
	switch {
	case !ok:
		vc.Unknown = true
		vc.Message = fmt.Sprintf("cannot compare %s's version %q with the minimum %q", name, info.Version, minimum)
	case cmp < 0:
		vc.Older = true
		vc.Message = fmt.Sprintf("%s %s is older than %s: update the IDE extension; features it lacks will fail", name, info.Version, minimum)
	}
	return vc
}

// CompareVersions compares two dotted versions ("1.2.10", "v0.2.0",
// "2.0.0-beta.1") by their numeric parts, a missing part being 0; a
// release sorts after its pre-releases, which compare by their dotted
// identifiers (numbers numerically, below names). Build metadata (+...)
// is ignored. ok is false when either version does not start with a
// number.
func CompareVersions(a, b string) (cmp int, ok bool) {
	va, okA := parseVersion(a)
	vb, okB := parseVersion(b)
	if !okA || !okB {
		return 0, false
	}
	for i := 0; i < max(len(va.nums), len(vb.nums)); i++ {
		x, y := part(va.nums, i), part(vb.nums, i)
		if x != y {
			return sign(x, y), true
		}
	}
	switch {
	case va.pre == nil && vb.pre == nil:
		return 0, true
	case va.pre == nil:
		return 1, true
	case vb.pre == nil:
		return -1, true
	}
	for i := 0; i < min(len(va.pre), len(vb.pre)); i++ {
		if c := comparePre(va.pre[i], vb.pre[i]); c != 0 {
			return c, true
		}
	}
	return sign(len(va.pre), len(vb.pre)), true
}

type version struct {
	nums []uint64
	pre  []string // nil: a release
}

func parseVersion(s string) (version, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i]
	}
	var v version
	core, pre, hasPre := strings.Cut(s, "-")
	for _, p := range strings.Split(core, ".") {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return version{}, false
		}
		v.nums = append(v.nums, n)
	}
	if hasPre {
		v.pre = strings.Split(pre, ".")
	}
	return v, true
}

func part(nums []uint64, i int) uint64 {
	if i < len(nums) {
		return nums[i]
	}
	return 0
}

func sign[T int | uint64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func comparePre(a, b string) int {
	na, errA := strconv.ParseUint(a, 10, 64)
	nb, errB := strconv.ParseUint(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return sign(na, nb)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}
