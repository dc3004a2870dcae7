// Package calc does not compile.
package calc

// Add returns a+b.
func Add(a, b int) int { return a + c }
