package conformance

// Clean has no diagnostics.
func Clean() string {
	return "😀 fine"
}
