package printable

import "testing"

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
