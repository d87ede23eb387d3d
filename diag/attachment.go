package diag

// FileDiagnostics are the new diagnostics of one document in an attachment.
type FileDiagnostics struct {
	URI string `json:"uri"`
	// Path is the file system path of a file:// URI, "" for other schemes.
	Path        string       `json:"path,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	// Cut counts this file's new diagnostics left out by the limits.
	Cut int `json:"cut"`
}

// Attachment is what Drain hands the agent: the new diagnostics since the
// last drain, bounded by the limits.
type Attachment struct {
	// Servers are the names of the servers whose diagnostics are in Files,
	// sorted.
	Servers []string `json:"servers"`
	// Files are sorted by URI; within a file, diagnostics are sorted by
	// severity, then position, then message.
	Files []FileDiagnostics `json:"files"`
	// Cut counts all new diagnostics left out by the limits, including
	// those of files left out entirely.
	Cut int `json:"cut"`
	// Notes are free-form lines rendered inside the block, such as a
	// warning that a file's diagnostics may be stale.
	Notes []string `json:"notes,omitempty"`
}

// Count returns the number of diagnostics in a.
func (a *Attachment) Count() int {
	n := 0
	for _, f := range a.Files {
		n += len(f.Diagnostics)
	}
	return n
}
