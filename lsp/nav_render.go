package lsp

// Render writes the locations for a model: a header line, then one line
// per location, `path:line:col: source line`, grouped by file.
func (r *Locations) Render(opts *NavRenderOptions) string { return "" }

// Render writes the hover text for a model: a header line, then the
// Markdown.
func (r *Hover) Render(opts *NavRenderOptions) string { return "" }

// Render writes the symbols for a model: one line per symbol, `kind name
// path:line:col`, children indented under their parent.
func (r *Symbols) Render(opts *NavRenderOptions) string { return "" }

// Render writes the call hierarchy for a model: the items, then each call
// with its call sites.
func (r *CallHierarchy) Render(opts *NavRenderOptions) string { return "" }

// Render writes the proposal for a model: a header line saying that
// nothing was written, then the unified diff.
func (r *RenameProposal) Render(opts *NavRenderOptions) string { return "" }

// Render writes the outcome of each file for a model.
func (r *RenameApplied) Render(opts *NavRenderOptions) string { return "" }
