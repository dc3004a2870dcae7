package queue

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRedact: a password in the user part is hidden; what Redact cannot
// parse, and a string without a user, come back as they are (see Redact).
func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://u:secret@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"postgres://h/db", "postgres://h/db"},
		{"host=h password=secret", "host=h password=secret"},
		{"postgres://u:secret@h:port/db", "postgres://u:secret@h:port/db"},
		{"postgres:///db?host=/tmp&password=secret", "postgres:///db?host=/tmp&password=secret"},
	} {
		assert.Equal(t, c.want, Redact(c.in), "Redact(%q)", c.in)
	}
}
