package idebridge

import (
	"strings"

	"github.com/idebridge/idebridge/internal/env"
)

// Environment variables read by detection and discovery.
const (
	// EnvSSEPort names the port of the IDE that started the agent; that
	// IDE's lockfile always matches the workspace and is exempt from the
	// ancestry check.
	EnvSSEPort = "CLAUDE_CODE_SSE_PORT"
	// EnvSkipValidCheck, when truthy (1, true, yes, on), turns off the
	// workspace check.
	EnvSkipValidCheck = "CLAUDE_CODE_IDE_SKIP_VALID_CHECK"
	// EnvHostOverride sets the host to connect to (pathconv.EnvHostOverride).
	EnvHostOverride = "CLAUDE_CODE_IDE_HOST_OVERRIDE"
	// EnvWSLDistro is set by WSL and names the distribution.
	EnvWSLDistro = "WSL_DISTRO_NAME"
)

// IDE families: editors that share an extension and a lockfile writer.
const (
	FamilyVSCode    = "vscode"    // VS Code, Cursor, Windsurf, VSCodium
	FamilyJetBrains = "jetbrains" // IntelliJ IDEA, PyCharm, ..., Android Studio
)

// Terminal is what the environment says about where the agent runs.
type Terminal struct {
	// IDE is the editor whose integrated terminal the agent runs in
	// ("Visual Studio Code", "Cursor", "Windsurf", "VSCodium", "PyCharm",
	// "JetBrains" when the product is unknown, ...); empty outside an IDE.
	IDE string `json:"ide,omitempty"`
	// Family is FamilyVSCode or FamilyJetBrains; empty outside an IDE.
	Family string `json:"family,omitempty"`
	// Via names the environment variable that identified the IDE.
	Via string `json:"via,omitempty"`
	// WSL is true inside WSL; Distro is then the distribution's name.
	WSL    bool   `json:"wsl,omitempty"`
	Distro string `json:"distro,omitempty"`
}

// InIDE reports whether the agent runs in an IDE's integrated terminal.
func (t Terminal) InIDE() bool { return t.Family != "" }

// DetectTerminal reads environ (os.Environ form; nil means the process's
// environment) and reports whether the agent runs inside an IDE's terminal,
// which one and how it was recognised, and whether it runs under WSL. The
// variables are tried in this order: CURSOR_TRACE_ID (Cursor),
// VSCODE_GIT_ASKPASS_MAIN (a VS Code family editor; its path names which),
// TERMINAL_EMULATOR=JetBrains-JediTerm (a JetBrains IDE, refined by
// __CFBundleIdentifier on macOS), __CFBundleIdentifier (the macOS app
// bundle) and TERM_PROGRAM=vscode.
func DetectTerminal(environ []string) Terminal {
	get := func(k string) string { return env.Get(environ, k) }
	var t Terminal
	if d := get(EnvWSLDistro); d != "" {
		t.WSL, t.Distro = true, d
	}
	bundleIDE, bundleFamily := ideFromBundle(get("__CFBundleIdentifier"))
	switch {
	case get("CURSOR_TRACE_ID") != "":
		t.IDE, t.Family, t.Via = "Cursor", FamilyVSCode, "CURSOR_TRACE_ID"
	case get("VSCODE_GIT_ASKPASS_MAIN") != "":
		t.IDE, t.Family, t.Via = ideFromAskpass(get("VSCODE_GIT_ASKPASS_MAIN")), FamilyVSCode, "VSCODE_GIT_ASKPASS_MAIN"
	case get("TERMINAL_EMULATOR") == "JetBrains-JediTerm":
		t.IDE, t.Family, t.Via = "JetBrains", FamilyJetBrains, "TERMINAL_EMULATOR"
		if bundleFamily == FamilyJetBrains {
			t.IDE = bundleIDE
		}
	case bundleFamily != "":
		t.IDE, t.Family, t.Via = bundleIDE, bundleFamily, "__CFBundleIdentifier"
	case strings.EqualFold(get("TERM_PROGRAM"), "vscode"):
		t.IDE, t.Family, t.Via = "Visual Studio Code", FamilyVSCode, "TERM_PROGRAM"
	}
	return t
}

// ideFromAskpass names the VS Code family editor from the path of its git
// askpass helper, e.g. /Applications/Cursor.app/..., ~/.windsurf-server/...,
// C:\Users\me\AppData\Local\Programs\Microsoft VS Code\....
func ideFromAskpass(p string) string {
	for _, part := range strings.FieldsFunc(strings.ToLower(p), func(r rune) bool { return r == '/' || r == '\\' }) {
		part = strings.TrimPrefix(part, ".")
		switch {
		case strings.HasPrefix(part, "cursor"):
			return "Cursor"
		case strings.HasPrefix(part, "windsurf"):
			return "Windsurf"
		case strings.HasPrefix(part, "vscodium"), strings.HasPrefix(part, "codium"):
			return "VSCodium"
		}
	}
	return "Visual Studio Code"
}

// jetBrainsProducts maps the product part of a JetBrains bundle identifier
// or process name to the product's name.
var jetBrainsProducts = map[string]string{
	"intellij":  "IntelliJ IDEA",
	"idea":      "IntelliJ IDEA",
	"pycharm":   "PyCharm",
	"webstorm":  "WebStorm",
	"phpstorm":  "PhpStorm",
	"rubymine":  "RubyMine",
	"clion":     "CLion",
	"goland":    "GoLand",
	"rider":     "Rider",
	"datagrip":  "DataGrip",
	"appcode":   "AppCode",
	"dataspell": "DataSpell",
	"aqua":      "Aqua",
	"gateway":   "Gateway",
	"fleet":     "Fleet",
}

// ideFromBundle names the IDE of a macOS bundle identifier, or returns ""
// for an app that is not a known IDE.
func ideFromBundle(id string) (ide, family string) {
	id = strings.ToLower(id)
	switch {
	case id == "":
		return "", ""
	case strings.HasPrefix(id, "com.microsoft.vscode"):
		return "Visual Studio Code", FamilyVSCode
	case strings.HasPrefix(id, "com.todesktop.230313mzl4w4u92"):
		return "Cursor", FamilyVSCode
	case strings.HasPrefix(id, "com.exafunction.windsurf"):
		return "Windsurf", FamilyVSCode
	case strings.HasPrefix(id, "com.vscodium"):
		return "VSCodium", FamilyVSCode
	case strings.HasPrefix(id, "com.google.android.studio"):
		return "Android Studio", FamilyJetBrains
	case strings.HasPrefix(id, "com.jetbrains."):
		product, _, _ := strings.Cut(strings.TrimPrefix(id, "com.jetbrains."), ".")
		if name, ok := jetBrainsProducts[product]; ok {
			return name, FamilyJetBrains
		}
		return "JetBrains", FamilyJetBrains
	}
	return "", ""
}
