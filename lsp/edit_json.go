package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// EditItem is one edit as JSON gives it: an item of the MCP tools' edits,
// of the command line's EDITS.json and of the C ABI's edits, all decoded
// and checked here. Its members are Edit's JSON names; the texts are
// pointers, so that an absent member is told from an empty one
// (new_string "" deletes old_string).
type EditItem struct {
	File      string  `json:"file"`
	OldString *string `json:"old_string"`
	NewString *string `json:"new_string"`
	NewText   *string `json:"new_text"`
	Symbol    string  `json:"symbol"`
	Body      *string `json:"body"`
	Action    string  `json:"action"`
	Text      *string `json:"text"`
	Force     bool    `json:"force"`
	Format    bool    `json:"format"`
	Fix       string  `json:"fix"`
	Line      int     `json:"line"`
}

// Edit checks the members that go together and returns the edit. Its
// errors are sentences without the edit's number, for the caller to
// prefix. Which single kind an edit is, and whether it applies, is
// EditSet.Stage's to say.
func (it *EditItem) Edit() (Edit, error) {
	if it.File == "" {
		return Edit{}, errors.New("no file given")
	}
	e := Edit{File: it.File, NewText: it.NewText, Symbol: it.Symbol, Body: it.Body, Action: SymbolAction(it.Action),
		Force: it.Force, Format: it.Format, Fix: it.Fix, Line: it.Line}
	if it.Text != nil {
		e.Text = *it.Text
	}
	switch {
	case it.OldString != nil:
		if *it.OldString == "" {
			return Edit{}, errors.New("old_string is empty; give text that occurs once in the file, or new_text for the whole file")
		}
		if it.NewString == nil {
			return Edit{}, errors.New(`old_string needs new_string ("" to delete it)`)
		}
		e.OldString, e.NewString = *it.OldString, *it.NewString
	case it.NewString != nil:
		return Edit{}, errors.New("new_string needs old_string, the text it replaces")
	}
	if it.Fix != "" && it.Line < 1 {
		return Edit{}, errors.New("fix needs line, the 1-based line the fix is for")
	}
	if it.Line != 0 && it.Fix == "" {
		return Edit{}, errors.New("line goes with fix, the title of a code action at that line")
	}
	if it.Symbol != "" && it.Body == nil && it.Action == "" {
		return Edit{}, errors.New("symbol needs body, or action with text")
	}
	switch SymbolAction(it.Action) {
	case "", SymbolBody, SymbolDelete, SymbolReplace, SymbolInsertBefore, SymbolInsertAfter:
	default:
		return Edit{}, fmt.Errorf("action %q is none of body, replace, insert_before, insert_after, delete", it.Action)
	}
	if it.Action != "" && it.Symbol == "" {
		return Edit{}, errors.New("action needs symbol, the symbol it acts on")
	}
	if it.Symbol != "" && it.Action != "" && it.Action != string(SymbolDelete) && it.Action != string(SymbolBody) && it.Text == nil {
		return Edit{}, fmt.Errorf("action %s needs text", it.Action)
	}
	return e, nil
}

// DecodeEdits decodes a JSON array of edits (EditItem), strictly: a
// member no edit has, a value of the wrong type, or anything after the
// array is an error, and so is an item whose members do not go together
// (EditItem.Edit; the error names the item, "edit 2: ..."). Paths are
// returned as given.
func DecodeEdits(data []byte) ([]Edit, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("no edits given (empty input; want a JSON array of edits)")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var items []EditItem
	if err := dec.Decode(&items); err != nil {
		return nil, fmt.Errorf("not a JSON array of edits: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a JSON array of edits: more follows the array")
	}
	if len(items) == 0 {
		return nil, errors.New("no edits given (want a JSON array of at least one edit)")
	}
	out := make([]Edit, len(items))
	for i := range items {
		e, err := items[i].Edit()
		if err != nil {
			return nil, fmt.Errorf("edit %d: %w", i+1, err)
		}
		out[i] = e
	}
	return out, nil
}
