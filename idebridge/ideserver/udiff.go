package ideserver

import "github.com/idebridge/idebridge/internal/udiff"

// UnifiedDiff returns a unified diff, with three lines of context, that
// turns oldText into newText; its header names oldName and newName. It
// returns "" when the texts are equal. A last line without a line break is
// marked "\ No newline at end of file", as diff(1) does.
//
// The diff is minimal (Myers) for texts that differ in up to a few thousand
// lines after their common head and tail are set aside; beyond that the
// differing middle is shown as one replacement, which is still correct.
func UnifiedDiff(oldName, newName, oldText, newText string) string {
	return udiff.Unified(oldName, newName, oldText, newText)
}
