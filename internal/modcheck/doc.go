// Package modcheck holds tests about the module as a whole, such as the
// one that keeps it free of dead code. It has no API.
package modcheck
