package fuzz

import (
	"errors"
	"testing"

	"github.com/idebridge/idebridge/lsp"

	"github.com/google/go-cmp/cmp"
)

// FuzzLSPConfig parses arbitrary .lsp.json documents. It must never panic;
// every problem is a *lsp.ConfigError; every loaded server has a
// command, at least one extension and a unique name; and a configuration
// that loads, written back with MarshalServers and loaded again with the
// same options, is the same configuration with no errors.
func FuzzLSPConfig(f *testing.F) {
	src := lsp.Source{Plugin: "p", Root: "/plugins/p", DataDir: "/data/p", File: "/plugins/p/.lsp.json"}
	opts := &lsp.LoadOptions{ProjectDir: "/proj", UserConfig: map[string]string{"mode": "strict", "weird": "${CLAUDE_PLUGIN_ROOT}"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfgs, errs := lsp.ParseServers(data, src, opts)
		for _, err := range errs {
			var ce *lsp.ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, lsp.ErrConfig) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
		}
		names := map[string]bool{}
		for _, c := range cfgs {
			if c.Command == "" || len(c.ExtensionToLanguage) == 0 {
				t.Fatalf("server %q loaded without command or extensions: %+v", c.Name, c)
			}
			if names[c.Name] {
				t.Fatalf("server name %q loaded twice", c.Name)
			}
			names[c.Name] = true
		}
		out, err := lsp.MarshalServers(cfgs)
		if err != nil {
			t.Fatalf("MarshalServers: %v", err)
		}
		again, errs := lsp.ParseServers(out, src, opts)
		if len(errs) != 0 {
			t.Fatalf("reloading %s: %v", out, errs)
		}
		if len(cfgs) == 0 && len(again) == 0 {
			return
		}
		if diff := cmp.Diff(cfgs, again); diff != "" {
			t.Fatalf("round trip (-loaded +reloaded):\n%s\nwritten:\n%s", diff, out)
		}
	})
}
