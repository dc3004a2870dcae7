package secret

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// fakeKeys returns n distinct 40-character keys, the same on every call.
func fakeKeys(n int) []string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]string, n)
	for i := range keys {
		b := make([]byte, 40)
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		keys[i] = "sk-" + string(b)
	}
	return keys
}

// sourceText returns about n bytes of this package's own source, the kind
// of text a commit holds.
func sourceText(t testing.TB, n int) string {
	src, err := os.ReadFile("secret.go")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Repeat(string(src), n/len(src)+1)[:n]
}

// replacePerForm is the scrubber's old search, kept to measure the new one
// against: one substring search per form, longest first.
func replacePerForm(list []string, s string) string {
	for _, f := range list {
		if strings.Contains(s, f) {
			s = strings.ReplaceAll(s, f, Marker)
		}
	}
	return s
}

// TestReplaceMatchesPerForm: on text with keys planted at random places,
// overlapping included, the one-pass search leaves no form behind and
// agrees with the old per-form search wherever no two forms overlap.
func TestReplaceMatchesPerForm(t *testing.T) {
	reset(t)
	keys := fakeKeys(200)
	for _, k := range keys {
		Add(k)
	}
	p := forms.Load()
	r := rand.New(rand.NewPCG(3, 4))
	text := sourceText(t, 1<<16)
	var b strings.Builder
	for i := 0; i < len(text); i += 997 {
		b.WriteString(text[i:min(i+997, len(text))])
		f := Forms(keys[r.IntN(len(keys))])
		b.WriteString(f[r.IntN(len(f))])
	}
	in := b.String()
	got := p.replace(in)
	if want := replacePerForm(p.list, in); got != want {
		t.Errorf("one-pass replace differs from the per-form replace")
	}
	for _, f := range p.list {
		if strings.Contains(got, f) {
			t.Fatalf("form %q left in the scrubbed text", f)
		}
	}
	// Two overlapping forms become one Marker, the text around them kept.
	Add("overlap-AAAA-1111")
	Add("1111-BBBB-overlap")
	if got, want := Scrub("<overlap-AAAA-1111-BBBB-overlap>"), "<"+Marker+">"; got != want {
		t.Errorf("Scrub of overlapping secrets = %q; want %q", got, want)
	}
}

// BenchmarkScrubSecrets measures the scrubber on 1 MiB of source text holding no
// secret (what nearly every commit and log line is) with 10, 100 and 1000
// registered secrets: "per-form" is the old search (one substring search
// per form, about a dozen forms per secret), "one-pass" the new.
func BenchmarkScrubSecrets(b *testing.B) {
	text := sourceText(b, 1<<20)
	for _, n := range []int{10, 100, 1000} {
		reset(b)
		for _, k := range fakeKeys(n) {
			Add(k)
		}
		p := forms.Load()
		b.Run(fmt.Sprintf("secrets=%d/per-form", n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				replacePerForm(p.list, text)
			}
		})
		b.Run(fmt.Sprintf("secrets=%d/one-pass", n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				p.replace(text)
			}
		})
	}
}
