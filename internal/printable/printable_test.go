package printable

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/statgraph/statgraph/internal/gittest"
)

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain title", "plain title"},
		{"Grüße 日本", "Grüße 日本"},
		{"two\nlines", `two\nlines`},
		{"cr\rtab\t", `cr\rtab\t`},
		{"\x1b[31mred", `\x1b[31mred`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085", `c1\u0085`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"", ""},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"two\nlines\n", "two\nlines\n"},
		{"a\tb\n", "a\tb\n"},
		{"clip \x1b]52;c;aGk=\x07 end\n", "clip \\x1b]52;c;aGk=\\a end\n"},
		{"cr\r\n", "cr\\r\n"},
		{"bad\xff\n\tx", "bad\\xff\n\tx"},
		{"Grüße\n", "Grüße\n"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestGitPathMatchesGit compares GitPath with what git itself prints for
// the same names (git ls-files, core.quotePath at its default).
func TestGitPathMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git program")
	}
	names := []string{"plain.txt", "ctl\x01name", "esc\x1b]52;c;aGk=\x07", "del\x7f", "tab\there", "new\nline", `quote"back\slash`, "Grüße", "sp ace"}
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q")
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, dir, "add", "--", n)
		got := gittest.Git(t, dir, "ls-files", "--", n)
		if want := GitPath(n); got != want {
			t.Errorf("GitPath(%q) = %s, git prints %s", n, want, got)
		}
	}
}
