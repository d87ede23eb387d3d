package ideserver

import (
	"context"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/mcp"
)

// openFileArgs are openFile's arguments, as VS Code and the Neovim plugin
// take them.
type openFileArgs struct {
	FilePath          string `json:"filePath"`
	StartText         string `json:"startText"`
	EndText           string `json:"endText"`
	SelectToEndOfLine bool   `json:"selectToEndOfLine"`
	// StartLine and EndLine are 1-based (the Neovim plugin's extension).
	StartLine int `json:"startLine"`
	EndLine   int `json:"endLine"`
}

// wantsSelection reports whether a asks for a selection.
func (a *openFileArgs) wantsSelection() bool { return a.StartLine > 0 || a.StartText != "" }

// selectIn computes the selection openFile makes in text: lines
// startLine to endLine (1-based, whole lines, clamped to the file), or
// from the first match of startText to the end of the next match of
// endText after it (the startText match alone without endText), to the
// end of that line with selectToEndOfLine. Text that is not found selects
// nothing: the cursor goes to the start, as editors do.
func selectIn(path, text string, a *openFileArgs) *selection {
	sel := &selection{path: path}
	start, end := -1, -1
	switch {
	case a.StartLine > 0:
		lines := strings.SplitAfter(text, "\n")
		first := min(a.StartLine, len(lines)) - 1
		last := first
		if a.EndLine > a.StartLine {
			last = min(a.EndLine, len(lines)) - 1
		}
		start = 0
		for _, l := range lines[:first] {
			start += len(l)
		}
		end = start
		for _, l := range lines[first : last+1] {
			end += len(l)
		}
		end -= len(lines[last]) - len(strings.TrimRight(lines[last], "\r\n"))
	case a.StartText != "":
		if i := strings.Index(text, a.StartText); i >= 0 {
			start, end = i, i+len(a.StartText)
			if a.EndText != "" {
				if j := strings.Index(text[end:], a.EndText); j >= 0 {
					end += j + len(a.EndText)
				}
			}
			if a.SelectToEndOfLine {
				if k := strings.IndexByte(text[end:], '\n'); k >= 0 {
					end += k
				} else {
					end = len(text)
				}
				end = len(strings.TrimRight(text[:end], "\r"))
			}
		}
	}
	if start < 0 {
		return sel
	}
	sel.text = text[start:end]
	sel.start, sel.end = utf16Position(text, start), utf16Position(text, end)
	return sel
}

// utf16Position returns the zero-based line and UTF-16 column of byte
// offset off in text.
func utf16Position(text string, off int) diag.Position {
	before := text[:off]
	line := strings.Count(before, "\n")
	col := 0
	for _, r := range before[strings.LastIndexByte(before, '\n')+1:] {
		if r == utf8.RuneError {
			col++
			continue
		}
		col += utf16.RuneLen(r)
	}
	return diag.Position{Line: line, Character: col}
}

// selectionAnswer is getCurrentSelection's and getLatestSelection's answer,
// in VS Code's shape.
type selectionAnswer struct {
	Success   bool           `json:"success"`
	Text      string         `json:"text"`
	FilePath  string         `json:"filePath"`
	FileURL   string         `json:"fileUrl"`
	Selection selectionRange `json:"selection"`
}

type selectionRange struct {
	Start   diag.Position `json:"start"`
	End     diag.Position `json:"end"`
	IsEmpty bool          `json:"isEmpty"`
}

func answerSelection(sel *selection, none string) (*mcp.ToolResult, error) {
	if sel == nil {
		return JSONResult(notOpenResult{Message: none})
	}
	return JSONResult(selectionAnswer{
		Success:   true,
		Text:      sel.text,
		FilePath:  sel.path,
		FileURL:   fileuri.FromPath(sel.path),
		Selection: selectionRange{Start: sel.start, End: sel.end, IsEmpty: sel.start == sel.end},
	})
}

func (s *Server) toolGetCurrentSelection(context.Context, *ToolCall) (*mcp.ToolResult, error) {
	return answerSelection(s.ed.current(), "No active editor found")
}

func (s *Server) toolGetLatestSelection(context.Context, *ToolCall) (*mcp.ToolResult, error) {
	return answerSelection(s.ed.latestSelection(), "No selection found")
}
