// Command brokenmod is a small Go program with deliberate mistakes, for
// `idebridge diag` to report. It does not build, on purpose.
package main

import "fmt"

func main() {
	var count int = "three"
	fmt.Println(count, total)
	fmt.Printf("%d items\n", "many")
	fmt.Println(greet("gopher"))
}
