// Package addmod is the tiny module the agents tests ask a scripted model to
// fix: Add subtracts instead of adding.
package addmod

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a - b
}
