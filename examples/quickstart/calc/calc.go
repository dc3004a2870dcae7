// Package calc is the quickstart's tiny library, with two bugs for the
// stand-in agent to work on.
package calc

// Add returns a plus b.
func Add(a, b int) int {
	return a - b
}

// Mul returns a times b.
func Mul(a, b int) int {
	return a + b
}
