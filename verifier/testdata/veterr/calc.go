// Package calc has a vet problem.
package calc

import "fmt"

// Describe formats n.
func Describe(n int) string { return fmt.Sprintf("%s items", n) }
