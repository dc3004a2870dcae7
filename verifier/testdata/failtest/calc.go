// Package calc adds numbers, wrongly.
package calc

// Add returns a+b, except that it does not.
func Add(a, b int) int { return a - b }
