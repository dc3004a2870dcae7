package taskid

import (
	"strings"
	"testing"
)

func TestReason(t *testing.T) {
	for _, id := range []string{"", "..", "a/b", "../x", "a b", "a\x00b", "a\nb", ".hidden", "-flag", "_x", "a..b", "x.", "x.lock", "ünï", "a:b", "a~b", "a^b", "a@{b", strings.Repeat("x", MaxLen+1)} {
		if Reason(id) == "" {
			t.Errorf("Reason(%q) = \"\", want a reason: the id is not usable as a directory and branch name", id)
		}
	}
	for _, id := range []string{"3", "3.2", "3.2.1", "fix-parser_2", "A9", "x.locked", strings.Repeat("x", MaxLen)} {
		if r := Reason(id); r != "" {
			t.Errorf("Reason(%q) = %q, want \"\"", id, r)
		}
	}
}
