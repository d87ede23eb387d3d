package warm

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCommandOptions: the options of a client of the idebridge command's
// runtime name that command's build and start it as `runtime serve`.
func TestCommandOptions(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o, err := CommandOptions(exe)
	if err != nil {
		t.Fatal(err)
	}
	own, err := BuildID()
	if err != nil {
		t.Fatal(err)
	}
	if o.Build != own || !slices.Equal(o.Start, []string{exe, "runtime", "serve"}) {
		t.Errorf("CommandOptions(%s): build %q start %q; want build %q and %s runtime serve", exe, o.Build, o.Start, own, exe)
	}
	other := filepath.Join(t.TempDir(), "idebridge")
	if err := os.WriteFile(other, []byte("another build"), 0o755); err != nil {
		t.Fatal(err)
	}
	if o, err := CommandOptions(other); err != nil || o.Build == own || len(o.Build) != 16 {
		t.Errorf("CommandOptions of another file: %+v, %v; want that file's own build", o, err)
	}
	if _, err := CommandOptions(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("CommandOptions of a missing file: no error")
	}
}
