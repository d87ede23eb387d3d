package main

// greet returns a greeting for name.
func greet(name string) string {
	return len(name)
}
