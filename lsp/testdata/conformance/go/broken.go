package conformance

import "fmt"

// Broken has two errors: an undefined name after an emoji, and a wrong return type.
func Broken() int {
	fmt.Println("😀 hello", undefinedName)
	return "not a number"
}
