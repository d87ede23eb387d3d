package lspdiag

import (
	"testing"

	"github.com/idebridge/idebridge/diag"
)

// TestCloseKeepsDelivered: Close drops what is pending, the version and
// the last publishes, and keeps the delivered memory, so a document
// reopened unchanged delivers nothing twice; Forget clears it.
func TestCloseKeepsDelivered(t *testing.T) {
	r := newReg(t, nil)
	const uri = "file:///a.go"
	r.SetVersion(uri, 1)
	mustPublish(t, r, "s", uri, ver(1), mkDiag(diag.SeverityError, 1, "boom"))
	if n := drainCount(r); n != 1 {
		t.Fatalf("first drain: %d", n)
	}
	mustPublish(t, r, "s", uri, ver(1), mkDiag(diag.SeverityError, 1, "boom"), mkDiag(diag.SeverityError, 2, "pending"))
	r.Close(uri)
	if _, ok := r.LastPublish("s", uri); ok {
		t.Error("last publish kept after Close")
	}
	if _, ok := r.Version(uri); ok {
		t.Error("version kept after Close")
	}
	if st := r.Stats(); st.Pending != 0 || st.Documents != 1 {
		t.Errorf("after Close: %+v", st)
	}
	// Reopened at a new version, the same diagnostic: nothing new.
	r.SetVersion(uri, 2)
	mustPublish(t, r, "s", uri, ver(2), mkDiag(diag.SeverityError, 1, "boom"))
	if n := drainCount(r); n != 0 {
		t.Errorf("re-delivered %d after Close", n)
	}
	r.Forget(uri)
	mustPublish(t, r, "s", uri, ver(3), mkDiag(diag.SeverityError, 1, "boom"))
	if n := drainCount(r); n != 1 {
		t.Errorf("after Forget: %d delivered, want 1", n)
	}
}
