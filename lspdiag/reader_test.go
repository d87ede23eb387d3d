package lspdiag

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idebridge/idebridge/diag"
)

// Two clients of one registry each get every diagnostic once, whoever
// drains first, and the registry's own Drain is one more client.
func TestReadersEachDeliverOnce(t *testing.T) {
	r := newReg(t, nil)
	r.SetVersion(mainGo, 1)
	a, b := r.NewReader(nil), r.NewReader(nil)
	a.Watch(mainGo)
	b.Watch(mainGo)
	mustPublish(t, r, gopls, mainGo, ver(1), mkDiag(diag.SeverityError, 1, "undefined: x"))

	for name, drain := range map[string]func() (*diag.Attachment, bool){"a": a.Drain, "default": r.Drain, "b": b.Drain} {
		att, ok := drain()
		if got := messages(att); !ok || !cmp.Equal(got, []string{"undefined: x"}) {
			t.Errorf("%s: first drain %v, %v; want the diagnostic", name, got, ok)
		}
		if att, ok := drain(); ok {
			t.Errorf("%s: second drain delivered %v", name, messages(att))
		}
	}
	// A new diagnostic: to each again, once; the old one is not repeated.
	mustPublish(t, r, gopls, mainGo, ver(1), mkDiag(diag.SeverityError, 1, "undefined: x"), mkDiag(diag.SeverityWarning, 2, "unused y"))
	for name, drain := range map[string]func() (*diag.Attachment, bool){"b": b.Drain, "a": a.Drain, "default": r.Drain} {
		att, ok := drain()
		if got := messages(att); !ok || !cmp.Equal(got, []string{"unused y"}) {
			t.Errorf("%s: drain after the second publish %v, %v; want only the new one", name, got, ok)
		}
	}
}

// A reader made after the publish (another client drained it long ago)
// still gets it: what stands is delivered to each new client.
func TestReaderSeesWhatStands(t *testing.T) {
	r := newReg(t, nil)
	r.SetVersion(mainGo, 1)
	mustPublish(t, r, gopls, mainGo, ver(1), mkDiag(diag.SeverityError, 1, "undefined: x"))
	if n := drainCount(r); n != 1 {
		t.Fatalf("default drain: %d diagnostics, want 1", n)
	}
	old := r.NewReader(nil)
	old.Watch(mainGo)
	if _, ok := old.Drain(); !ok {
		t.Fatal("old reader: nothing")
	}
	for i := range 3 {
		rd := r.NewReader(nil)
		rd.Watch(mainGo)
		att, ok := rd.Drain()
		if got := messages(att); !ok || !cmp.Equal(got, []string{"undefined: x"}) {
			t.Errorf("reader %d: %v, %v; want what stands", i, got, ok)
		}
		rd.Close()
	}
	// A newer clean publish: nothing stands, nothing for a new reader.
	mustPublish(t, r, gopls, mainGo, ver(1))
	rd := r.NewReader(nil)
	rd.Watch(mainGo)
	if att, ok := rd.Drain(); ok {
		t.Errorf("after a clean publish: %v", messages(att))
	}
	// A stale set is not delivered: the version moved on.
	mustPublish(t, r, gopls, mainGo, ver(1), mkDiag(diag.SeverityError, 3, "old"))
	r.SetVersion(mainGo, 2)
	rd2 := r.NewReader(nil)
	rd2.Watch(mainGo)
	if att, ok := rd2.Drain(); ok {
		t.Errorf("stale set delivered: %v", messages(att))
	}
}

// A reader sees the documents it watches and those nobody opened; a
// document another client opened (it has a version) is not its own,
// unless its server diagnoses the workspace (it published for a file
// nobody opened), as it would then publish for that file anyway.
func TestReaderScope(t *testing.T) {
	r := newReg(t, nil)
	const mine, theirs, nobodys = "file:///proj/mine.py", "file:///proj/theirs.py", "file:///proj/other.go"
	const theirsGo = "file:///proj/theirs.go"
	r.SetVersion(mine, 1)
	r.SetVersion(theirs, 1)
	r.SetVersion(theirsGo, 1)
	mustPublish(t, r, pyright, mine, ver(1), mkDiag(diag.SeverityError, 1, "mine"))
	mustPublish(t, r, pyright, theirs, ver(1), mkDiag(diag.SeverityError, 1, "theirs"))
	mustPublish(t, r, gopls, theirsGo, ver(1), mkDiag(diag.SeverityError, 1, "theirs.go"))
	// An empty set for a file nobody opened (pyright on a closed file)
	// says nothing of the server's scope.
	mustPublish(t, r, pyright, "file:///proj/closed.py", nil)
	rd := r.NewReader(nil)
	rd.Watch(mine)
	rd.WatchServer(pyright)
	// A reader with pyright's file alone does not see gopls's.
	mustPublish(t, r, gopls, "file:///proj/gone.go", nil, mkDiag(diag.SeverityError, 1, "gopls"))
	r.Forget("file:///proj/gone.go")
	att, _ := rd.Drain()
	if got, want := messages(att), []string{"mine"}; !cmp.Equal(got, want) {
		t.Errorf("reader got %v, want %v", got, want)
	}
	// gopls publishes for a file nobody opened: it diagnoses the
	// workspace, and would publish for theirs.go in a process of this
	// client's own.
	mustPublish(t, r, gopls, nobodys, nil, mkDiag(diag.SeverityError, 1, "nobody's"))
	if att, ok := rd.Drain(); ok {
		t.Errorf("a reader of pyright's files got gopls's: %v", messages(att))
	}
	rd.WatchServer(gopls)
	att, _ = rd.Drain()
	if got, want := messages(att), []string{"nobody's", "theirs.go"}; !cmp.Equal(got, want) {
		t.Errorf("reader got %v, want %v", got, want)
	}
	// Closed by its client, theirs.py is nobody's now, until opened again.
	r.Close(theirs)
	mustPublish(t, r, pyright, theirs, nil, mkDiag(diag.SeverityError, 1, "theirs"))
	att, _ = rd.Drain()
	if got, want := messages(att), []string{"theirs"}; !cmp.Equal(got, want) {
		t.Errorf("after close: reader got %v, want %v", got, want)
	}
}

// Readers are bounded like the registry, and a closed one delivers
// nothing and holds nothing.
func TestReaderBounds(t *testing.T) {
	r := newReg(t, &RegistryOptions{MaxDocuments: 8, MaxPerFile: 2, MaxTotal: 3})
	rd := r.NewReader(nil)
	for i := range 40 {
		uri := fmt.Sprintf("file:///proj/f%02d.go", i)
		r.SetVersion(uri, 1)
		rd.Watch(uri)
		mustPublish(t, r, gopls, uri, ver(1), errs(3, uri)...)
	}
	if n := len(rd.watched); n > 8 {
		t.Errorf("%d documents watched, want at most MaxDocuments (8)", n)
	}
	att, ok := rd.Drain()
	if !ok || att.Count() != 3 {
		t.Fatalf("drain: %v %d, want MaxTotal (3)", ok, att.Count())
	}
	for _, f := range att.Files {
		if len(f.Diagnostics) > 2 {
			t.Errorf("%s: %d diagnostics, want at most MaxPerFile (2)", f.Path, len(f.Diagnostics))
		}
	}
	if att.Cut != 8*3-3 {
		t.Errorf("cut %d, want %d", att.Cut, 8*3-3)
	}
	if n := len(rd.docs); n > 8 {
		t.Errorf("reader remembers %d documents, want at most 8", n)
	}
	// A reader's own limits, not the registry's.
	own := r.NewReader(&ReaderOptions{MaxPerFile: 1, MaxTotal: -1})
	for i := 30; i < 40; i++ {
		own.Watch(fmt.Sprintf("file:///proj/f%02d.go", i))
	}
	att, _ = own.Drain()
	if att.Count() != 8 || att.Cut != 8*2 {
		t.Errorf("own limits: %d delivered, %d cut; want 8 and 16", att.Count(), att.Cut)
	}
	rd.Close()
	if rd.docs != nil || rd.watched != nil {
		t.Error("closed reader holds its memory")
	}
	rd.Watch(mainGo)
	if _, ok := rd.Drain(); ok {
		t.Error("closed reader delivered")
	}
	// Readers dropped without Close leave nothing in the registry.
	before := r.Stats()
	for range 1000 {
		x := r.NewReader(nil)
		x.Watch("file:///proj/f39.go")
		x.Drain()
	}
	if after := r.Stats(); after.Tracked != before.Tracked || after.Pending != before.Pending {
		t.Errorf("readers changed the registry: %+v -> %+v", before, after)
	}
}

// FuzzReaderAgreesWithFreshRegistry: whatever was published, drained by
// the registry's own Drain or by other readers in between, a new reader
// watching the open documents delivers what a registry that saw the same
// publishes and never drained delivers (a process's own registry, which
// opened the same files), and a second drain delivers nothing.
func FuzzReaderAgreesWithFreshRegistry(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	f.Add([]byte{3, 200, 17, 4, 90, 33, 1, 0, 255, 128, 64, 7, 9, 12, 44})
	f.Add([]byte("publish drain version reader"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		opts := &RegistryOptions{MaxPerFile: 3, MaxTotal: 5, MaxPerPublish: 4}
		shared, fresh := newReg(t, opts), newReg(t, opts)
		uris := []string{"file:///p/a.go", "file:///p/b.go", "file:///p/c.go"}
		servers := []string{gopls, pyright}
		versions := map[string]int{}
		var others []*Reader
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i], int(ops[i+1])
			uri := uris[arg%len(uris)]
			switch op % 6 {
			case 0, 1, 2: // a publish, versioned or not
				var v *int
				if cur, ok := versions[uri]; ok && op%2 == 0 {
					v = ver(cur - arg%2)
				}
				ds := make([]diag.Diagnostic, arg%6)
				for j := range ds {
					ds[j] = mkDiag(diag.Severity(1+(arg+j)%4), (arg*j)%5, fmt.Sprintf("m%d", (arg+j)%7))
				}
				p := &diag.PublishParams{URI: uri, Version: v, Diagnostics: ds}
				if err := shared.PublishParams(servers[arg%2], p); err != nil {
					t.Fatal(err)
				}
				if err := fresh.PublishParams(servers[arg%2], p); err != nil {
					t.Fatal(err)
				}
			case 3: // a client opens or changes the document
				versions[uri]++
				shared.SetVersion(uri, versions[uri])
				fresh.SetVersion(uri, versions[uri])
			case 4: // the default client drains
				shared.Drain()
			case 5: // another client drains
				if len(others) == 0 || arg%3 == 0 {
					rd := shared.NewReader(nil)
					rd.Watch(uri)
					others = append(others, rd)
				}
				others[arg%len(others)].Drain()
			}
		}
		rd := shared.NewReader(nil)
		for uri := range versions {
			rd.Watch(uri)
		}
		for _, s := range servers {
			rd.WatchServer(s)
		}
		want, wantOK := fresh.Drain()
		got, gotOK := rd.Drain()
		if gotOK != wantOK || !cmp.Equal(got, want) {
			t.Fatalf("reader: %v %+v\nfresh registry: %v %+v", gotOK, got, wantOK, want)
		}
		if att, ok := rd.Drain(); ok {
			t.Fatalf("second drain: %+v", att)
		}
	})
}
