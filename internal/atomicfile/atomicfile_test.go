package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReadStatesItsContent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, st, err := Read(p)
	if err != nil || string(data) != "one\n" || !st.Exists || st.Size != 4 {
		t.Fatalf("Read: %q %+v %v", data, st, err)
	}
	if err := Write(p, []byte("two\n"), st); err != nil {
		t.Fatal(err)
	}
	// The state read with "one" no longer matches.
	if err := Write(p, []byte("three\n"), st); !errors.Is(err, ErrConflict) {
		t.Fatalf("write against a stale state: %v", err)
	}
	_, st, err = Read(filepath.Join(t.TempDir(), "missing"))
	if err != nil || st.Exists {
		t.Fatalf("Read of a missing file: %+v %v", st, err)
	}
}
