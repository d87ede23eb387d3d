package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The type hierarchy (LSP 3.17): textDocument/prepareTypeHierarchy names
// the type at a place, typeHierarchy/supertypes and typeHierarchy/subtypes
// follow it one level up or down. It runs as the call hierarchy does: the
// same wait for a loading server, the same completeness in Answer, and
// ErrUnsupported from a server whose initialize answer has no
// typeHierarchyProvider. A server that announces one but does not know
// prepareTypeHierarchy is asked the earlier proposal's
// textDocument/typeHierarchy instead, which answers the same.

// The type hierarchy's methods, and the capability that offers them. They
// join navProvider here rather than in its literal so that this file holds
// the whole of the type hierarchy.
const (
	methodPrepareTypeHierarchy = "textDocument/prepareTypeHierarchy"
	methodSupertypes           = "typeHierarchy/supertypes"
	methodSubtypes             = "typeHierarchy/subtypes"
)

func init() {
	for _, m := range []string{methodPrepareTypeHierarchy, methodSupertypes, methodSubtypes} {
		navProvider[m] = "typeHierarchyProvider"
	}
}

// TypeItem is an item of a type hierarchy: a class, struct, interface,
// enum or other type.
type TypeItem struct {
	Name   string     `json:"name"`
	Kind   SymbolKind `json:"kind"`
	Detail string     `json:"detail,omitempty"`
	// Location is the item's name (its selection range).
	Location Location `json:"location"`
	// raw is the item as the server sent it, for supertypes and subtypes.
	raw []byte
}

// TypeHierarchy is the result of PrepareTypeHierarchy, Supertypes and
// Subtypes.
type TypeHierarchy struct {
	Answer
	// Items are what the position names (usually one type).
	Items []TypeItem `json:"items"`
	// Types are the direct supertypes or subtypes of the items, sorted by
	// path and position, without duplicates; nil for PrepareTypeHierarchy.
	// All of them, or the page of them that starts at Offset (see Page).
	Types []TypeItem `json:"types,omitempty"`
	// Total is how many types the whole answer has, exact even when Types
	// holds a page of them.
	Total int `json:"total"`
	// Offset is the 0-based index in the whole answer of Types[0]: 0
	// unless this is a page that starts further on.
	Offset int `json:"offset,omitempty"`
}

// Page returns the page of res that holds at most limit types from the
// 0-based offset on (limit <= 0: all of them from offset on), with Total
// still the whole answer's, as Locations.Page does. res is not changed.
func (res *TypeHierarchy) Page(offset, limit int) *TypeHierarchy {
	out := *res
	out.Total = totalOf(res.Total, res.Offset, len(res.Types))
	lo, hi := pageBounds(res.Offset, len(res.Types), offset, limit)
	if res.Types != nil {
		out.Types = res.Types[lo:hi:hi]
	}
	out.Offset = max(offset, res.Offset)
	return &out
}

// typeItem converts a TypeHierarchyItem of t's server; its shape is a
// CallHierarchyItem's.
func (m *Manager) typeItem(t *navTarget, raw json.RawMessage) (TypeItem, error) {
	var it lspCallItem
	if err := json.Unmarshal(raw, &it); err != nil {
		return TypeItem{}, fmt.Errorf("decoding a type hierarchy item: %w", err)
	}
	if it.Name == "" && it.URI == "" {
		return TypeItem{}, fmt.Errorf("decoding a type hierarchy item: %.100s has no name and no uri", raw)
	}
	return TypeItem{Name: it.Name, Kind: it.Kind, Detail: it.Detail,
		Location: m.location(t, it.URI, it.SelectionRange), raw: append([]byte(nil), raw...)}, nil
}

// prepareTypes runs prepareTypeHierarchy.
func (m *Manager) prepareTypes(ctx context.Context, op NavOp, at Pos) (*navTarget, *TypeHierarchy, error) {
	t, r, err := m.navResolve(ctx, at)
	if err != nil {
		return nil, nil, err
	}
	var list []json.RawMessage
	a, err := m.request(ctx, t, op, methodPrepareTypeHierarchy, t.positionParams(r), &list)
	if errors.Is(err, ErrUnsupported) {
		if ok, _ := t.inst.offers(methodPrepareTypeHierarchy); ok {
			// It announced a type hierarchy and does not know LSP 3.17's:
			// the earlier proposal's, then (clangd before 16).
			res, lerr := m.legacyTypes(ctx, t, r, op)
			if lerr == nil || !errors.Is(lerr, ErrUnsupported) {
				return nil, res, lerr
			}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	a.At = t.at(r)
	res := &TypeHierarchy{Answer: a, Items: []TypeItem{}}
	for _, raw := range list {
		it, err := m.typeItem(t, raw)
		if err != nil {
			return nil, nil, fmt.Errorf("%s from %s: %w", op, a.Server, err)
		}
		res.Items = append(res.Items, it)
	}
	return t, res, nil
}

// methodLegacyTypes is the type hierarchy of the proposal that came
// before LSP 3.17 (clangd 14 and 15 answer it, and announce it as
// typeHierarchyProvider): one request answers the item with its parents
// and children resolved to the depth asked.
const methodLegacyTypes = "textDocument/typeHierarchy"

// legacyItem is a TypeHierarchyItem of the earlier proposal.
type legacyItem struct {
	lspCallItem
	Parents  []json.RawMessage `json:"parents"`
	Children []json.RawMessage `json:"children"`
}

// legacyTypes answers op with the earlier proposal's
// textDocument/typeHierarchy: direction 1 the parents (supertypes), 0 the
// children (subtypes), resolved one level.
func (m *Manager) legacyTypes(ctx context.Context, t *navTarget, r resolved, op NavOp) (*TypeHierarchy, error) {
	params := t.positionParams(r)
	params["resolve"], params["direction"] = 1, 1
	if op == OpSubtypes {
		params["direction"] = 0
	}
	var raw json.RawMessage
	a, err := m.request(ctx, t, op, methodLegacyTypes, params, &raw)
	if err != nil {
		return nil, err
	}
	a.At = t.at(r)
	res := &TypeHierarchy{Answer: a, Items: []TypeItem{}}
	if op != OpPrepareTypeHierarchy {
		res.Types = []TypeItem{}
	}
	if emptyAnswer(raw) {
		return res, nil
	}
	var it legacyItem
	if err := json.Unmarshal(raw, &it); err != nil {
		return nil, fmt.Errorf("%s from %s: decoding a type hierarchy item: %w", op, a.Server, err)
	}
	item, err := m.typeItem(t, raw)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", op, a.Server, err)
	}
	item.raw = nil // not an item of LSP 3.17's requests
	res.Items = append(res.Items, item)
	next := it.Parents
	switch op {
	case OpPrepareTypeHierarchy:
		return res, nil
	case OpSubtypes:
		next = it.Children
	}
	for _, raw := range next {
		other, err := m.typeItem(t, raw)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", op, a.Server, err)
		}
		other.raw = nil
		res.Types = append(res.Types, other)
	}
	res.Types = sortTypeItems(res.Types)
	res.Total = len(res.Types)
	return res, nil
}

// PrepareTypeHierarchy returns the type hierarchy items at at
// (textDocument/prepareTypeHierarchy): the type named there. It fails with
// ErrUnsupported when the file's server offers no type hierarchy.
func (m *Manager) PrepareTypeHierarchy(ctx context.Context, at Pos) (*TypeHierarchy, error) {
	_, res, err := m.prepareTypes(ctx, OpPrepareTypeHierarchy, at)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Supertypes returns the direct supertypes of the type at at: the classes
// it extends, the interfaces it implements (prepareTypeHierarchy, then
// typeHierarchy/supertypes). It fails with ErrUnsupported when the file's
// server offers no type hierarchy.
func (m *Manager) Supertypes(ctx context.Context, at Pos) (*TypeHierarchy, error) {
	return m.types(ctx, OpSupertypes, at)
}

// Subtypes returns the direct subtypes of the type at at: the classes
// that extend it, the types that implement the interface
// (prepareTypeHierarchy, then typeHierarchy/subtypes). It fails with
// ErrUnsupported when the file's server offers no type hierarchy.
func (m *Manager) Subtypes(ctx context.Context, at Pos) (*TypeHierarchy, error) {
	return m.types(ctx, OpSubtypes, at)
}

func (m *Manager) types(ctx context.Context, op NavOp, at Pos) (*TypeHierarchy, error) {
	t, res, err := m.prepareTypes(ctx, op, at)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return res, nil // answered whole by the earlier proposal
	}
	method := methodSupertypes
	if op == OpSubtypes {
		method = methodSubtypes
	}
	res.Types = []TypeItem{}
	for _, item := range res.Items {
		var list []json.RawMessage
		a, err := m.request(ctx, t, op, method, map[string]any{"item": json.RawMessage(item.raw)}, &list)
		if err != nil {
			return nil, err
		}
		if a.Incomplete && !res.Incomplete {
			res.Incomplete, res.Reason, res.Status = true, a.Reason, StatusPartial
		}
		for _, raw := range list {
			it, err := m.typeItem(t, raw)
			if err != nil {
				return nil, fmt.Errorf("%s from %s: %w", op, a.Server, err)
			}
			res.Types = append(res.Types, it)
		}
	}
	res.Types = sortTypeItems(res.Types)
	res.Total = len(res.Types)
	return res, nil
}

// sortTypeItems sorts items by path (or URI), then position, then name,
// and drops duplicates (the same type reached from two items).
func sortTypeItems(items []TypeItem) []TypeItem {
	key := func(l *Location) string {
		if l.Path != "" {
			return l.Path
		}
		return l.URI
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := &items[i].Location, &items[j].Location
		if ka, kb := key(a), key(b); ka != kb {
			return ka < kb
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return items[i].Name < items[j].Name
	})
	out := items[:0]
	for i, it := range items {
		if i > 0 {
			p := &items[i-1]
			if it.Name == p.Name && it.Kind == p.Kind && it.Location == p.Location {
				continue
			}
		}
		out = append(out, it)
	}
	return out
}

// Render writes the type hierarchy for a model: the types the position
// names, then one line per supertype or subtype, `kind name detail
// path:line:col`, at most NavRenderOptions.MaxLocations of them.
func (res *TypeHierarchy) Render(opts *NavRenderOptions) string {
	r := newRenderer(opts)
	subj := r.subject(&res.Answer)
	if len(res.Items) == 0 {
		if res.Incomplete {
			return emptyIncomplete(&res.Answer, "type hierarchy item for "+subj) + "\n"
		}
		return fmt.Sprintf("%s found no type to follow the hierarchy of at %s.\n", res.Server, subj)
	}
	item := func(it *TypeItem) string {
		s := fmt.Sprintf("%s %s", it.Kind, it.Name)
		if d := strings.Join(strings.Fields(it.Detail), " "); d != "" {
			s += " " + shorten(d, 80)
		}
		return s + "  " + r.place(&it.Location)
	}
	var title, what string
	switch res.Op {
	case OpSupertypes:
		title, what = "Supertypes of", "supertypes"
	case OpSubtypes:
		title, what = "Subtypes of", "subtypes"
	default:
		fmt.Fprintf(&r.b, "Type hierarchy at %s, from %s:\n", subj, res.Server)
		if res.Incomplete {
			r.b.WriteString(incompleteNote(&res.Answer) + "\n")
		}
		for i := range res.Items {
			r.b.WriteString(item(&res.Items[i]) + "\n")
		}
		return r.b.String()
	}
	names := make([]string, len(res.Items))
	for i := range res.Items {
		names[i] = res.Items[i].Name
	}
	on := fmt.Sprintf("%s (%s)", strings.Join(names, ", "), r.place(&res.Items[0].Location))
	total := totalOf(res.Total, res.Offset, len(res.Types))
	if len(res.Types) == 0 {
		if total > 0 {
			return pastEnd(res.Server, total, what+" of "+on, res.Offset)
		}
		if res.Incomplete {
			return emptyIncomplete(&res.Answer, what+" of "+on) + "\n"
		}
		return fmt.Sprintf("%s found no %s of %s.\n", res.Server, what, on)
	}
	fmt.Fprintf(&r.b, "%s %s, from %s: %d type%s", title, on, res.Server, total, plural(total))
	if n := len(res.Types); n < total {
		fmt.Fprintf(&r.b, "; showing %s", showing(res.Offset, n, total))
	}
	r.b.WriteByte('\n')
	if res.Incomplete {
		r.b.WriteString(incompleteNote(&res.Answer) + "\n")
	}
	r.b.WriteByte('\n')
	for i := range res.Types {
		if r.max >= 0 && i >= r.max {
			fmt.Fprintf(&r.b, "… %d more %s\n", len(res.Types)-i, what)
			break
		}
		r.b.WriteString(item(&res.Types[i]) + "\n")
	}
	return r.b.String()
}
