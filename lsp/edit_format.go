package lsp

import (
	"context"
	"fmt"
	"strings"
)

// opFormat names formatting in answers and errors.
const opFormat NavOp = "formatting"

// format sends text to path's server as the staged text and returns it
// formatted by the server (textDocument/formatting), indenting with tabs
// or spaces as the text mostly does.
func (s *EditSet) format(ctx context.Context, path, text string) (string, error) {
	if err := s.touch(ctx, path, &text); err != nil {
		return "", err
	}
	t, err := s.m.navOpen(ctx, path)
	if err != nil {
		return "", err
	}
	if t.idx.text != text {
		return "", fmt.Errorf("the server's text of %s is not the staged text (changed by another caller); try again", s.m.display(path))
	}
	tabs, spaces := 0, 0
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "\t"):
			tabs++
		case strings.HasPrefix(l, "  "):
			spaces++
		}
	}
	var edits []lspTextEdit
	params := map[string]any{
		"textDocument": map[string]string{"uri": t.uri},
		"options":      map[string]any{"tabSize": 4, "insertSpaces": spaces > tabs},
	}
	if _, err := s.m.request(ctx, t, opFormat, "textDocument/formatting", params, &edits); err != nil {
		return "", err
	}
	out, err := applyEdits(text, edits, t.enc)
	if err != nil {
		return "", fmt.Errorf("formatting from %s: %w", t.srv.cfg.Name, err)
	}
	return out, nil
}
