package secret

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// reset forgets every secret.
func reset(t testing.TB) {
	t.Helper()
	clear := func() {
		mu.Lock()
		defer mu.Unlock()
		values = map[string]string{}
		known = map[string]bool{}
		forms.Store(nil)
	}
	clear()
	t.Cleanup(clear)
}

const key = "sk-canary/Zq+7w?x&y=1 end"

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

func TestScrubEveryForm(t *testing.T) {
	reset(t)
	Register("OPENAI_API_KEY", key)
	forms := map[string]string{
		"exact":          key,
		"reversed":       reverse(key),
		"hex":            hex.EncodeToString([]byte(key)),
		"HEX":            strings.ToUpper(hex.EncodeToString([]byte(key))),
		"query escaped":  url.QueryEscape(key),
		"path escaped":   url.PathEscape(key),
		"base64":         base64.StdEncoding.EncodeToString([]byte(key)),
		"base64 raw":     base64.RawStdEncoding.EncodeToString([]byte(key)),
		"base64 url":     base64.URLEncoding.EncodeToString([]byte(key)),
		"base64 url raw": base64.RawURLEncoding.EncodeToString([]byte(key)),
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			in := "before " + form + " after"
			got := Scrub(in)
			if strings.Contains(got, form) || !strings.Contains(got, Marker) {
				t.Fatalf("Scrub(%q) = %q; want the %s form replaced by %s", in, got, name, Marker)
			}
			if !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
				t.Fatalf("Scrub(%q) = %q; want the text around the secret kept", in, got)
			}
			if b := ScrubBytes([]byte(in)); string(b) != got {
				t.Fatalf("ScrubBytes(%q) = %q; want %q as Scrub", in, b, got)
			}
			if !Contains([]byte(in)) {
				t.Fatalf("Contains(%q) = false; want true", in)
			}
		})
	}
}

// TestScrubInsideBase64Blob encodes the key inside a longer blob at each of
// the three byte alignments, as `base64 /proc/<pid>/environ` would.
func TestScrubInsideBase64Blob(t *testing.T) {
	reset(t)
	Register("OPENAI_API_KEY", key)
	encs := map[string]*base64.Encoding{
		"std": base64.StdEncoding, "raw": base64.RawStdEncoding,
		"url": base64.URLEncoding, "rawurl": base64.RawURLEncoding,
	}
	for name, enc := range encs {
		for pre := range 6 {
			blob := enc.EncodeToString([]byte(strings.Repeat("P", pre) + "OPENAI_API_KEY=" + key + "\x00HOME=/root\x00"))
			got := Scrub("leak: " + blob)
			if got == "leak: "+blob {
				t.Errorf("%s, %d bytes before: Scrub left %q unchanged; want the key's encoding replaced", name, pre, blob)
				continue
			}
			// Whatever is left must not decode to anything holding the key.
			for _, part := range strings.Split(strings.TrimPrefix(got, "leak: "), Marker) {
				if dec, err := enc.DecodeString(part); err == nil && strings.Contains(string(dec), key) {
					t.Errorf("%s, %d bytes before: %q still decodes to the key", name, pre, part)
				}
			}
		}
	}
}

func TestScrubNoFalsePositives(t *testing.T) {
	reset(t)
	Register("SHORT_TOKEN", "abc1234") // 7 bytes: below MinLen
	Register("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
	for _, in := range []string{"", "abc1234", "token abc1234 in a line", "GET http://127.0.0.1:8080/v1/chat"} {
		if got := Scrub(in); got != in {
			t.Errorf("Scrub(%q) = %q; want it unchanged (short secrets and _URL values are not scrubbed)", in, got)
		}
	}
	if Active() {
		t.Errorf("Active() = true; want false with only a short secret and a URL registered")
	}
	if v, ok := Lookup("SHORT_TOKEN"); !ok || v != "abc1234" {
		t.Errorf("Lookup(SHORT_TOKEN) = %q, %v; want the registered value", v, ok)
	}
	Register("OPENAI_API_KEY", key)
	for _, in := range []string{"sk-canary", "an ordinary line of test output\nok  \tpkg\t0.01s", strings.Repeat("x", 10000)} {
		if got := Scrub(in); got != in {
			t.Errorf("Scrub(%q) = %q; want it unchanged", in, got)
		}
	}
}

func TestLookupFallsBackToEnvironment(t *testing.T) {
	reset(t)
	t.Setenv("STATGRAPH_TEST_TOKEN", "from-env")
	if v, ok := Lookup("STATGRAPH_TEST_TOKEN"); !ok || v != "from-env" {
		t.Errorf("Lookup = %q, %v; want the environment's value", v, ok)
	}
	Register("STATGRAPH_TEST_TOKEN", "registered")
	if v, _ := Lookup("STATGRAPH_TEST_TOKEN"); v != "registered" {
		t.Errorf("Lookup = %q; want the registered value before the environment's", v)
	}
}

func TestScrubFastPathAllocatesNothing(t *testing.T) {
	reset(t)
	Register("OPENAI_API_KEY", key)
	line := strings.Repeat("ordinary output ", 100)
	if n := testing.AllocsPerRun(100, func() { _ = Scrub(line) }); n != 0 {
		t.Errorf("Scrub of a clean line allocated %v times; want 0", n)
	}
}

// FuzzScrub checks that no encoding of an alphanumeric secret survives,
// wherever it sits in the text.
func FuzzScrub(f *testing.F) {
	f.Add("sk-proj-abcdef123456", "prefix ", " suffix", uint8(0))
	f.Add("ABCDEFGH", "", "", uint8(3))
	f.Fuzz(func(t *testing.T, secret, before, after string, form uint8) {
		secret = strings.Map(func(r rune) rune {
			if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return r
			}
			return 'q'
		}, secret)
		if len(secret) < MinLen {
			return
		}
		reset(t)
		Add(secret)
		blob := before + secret + after
		var in string
		switch form % 6 {
		case 0:
			in = blob
		case 1:
			in = reverse(blob)
		case 2:
			in = hex.EncodeToString([]byte(blob))
		case 3:
			in = base64.StdEncoding.EncodeToString([]byte(blob))
		case 4:
			in = base64.RawURLEncoding.EncodeToString([]byte(blob))
		case 5:
			in = url.QueryEscape(blob)
		}
		got := Scrub(in)
		for _, p := range Forms(secret) {
			if strings.Contains(got, p) {
				t.Fatalf("Scrub(%q) = %q; still holds form %q of %q", in, got, p, secret)
			}
		}
	})
}

func BenchmarkScrub(b *testing.B) {
	reset(b)
	Register("OPENAI_API_KEY", key)
	out := []byte(strings.Repeat("--- FAIL: TestSomething (0.00s)\n    x_test.go:12: got 3, want 4\n", 1<<14))
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		_ = ScrubBytes(out)
	}
}

// TestEnvironAddsRegisteredValues: a value Isolate took out of the
// environment is still handed on by name; the environment's own entry wins.
func TestEnvironAddsRegisteredValues(t *testing.T) {
	t.Setenv("SG_ENVIRON_SHOWN", "from-env")
	Register("SG_ENVIRON_HIDDEN_KEY", "hidden-value-123")
	Register("SG_ENVIRON_SHOWN", "registered-value")
	env := Environ()
	if !slices.Contains(env, "SG_ENVIRON_HIDDEN_KEY=hidden-value-123") {
		t.Errorf("Environ() lacks the registered SG_ENVIRON_HIDDEN_KEY")
	}
	if !slices.Contains(env, "SG_ENVIRON_SHOWN=from-env") || slices.Contains(env, "SG_ENVIRON_SHOWN=registered-value") {
		t.Errorf("Environ(): the environment's own SG_ENVIRON_SHOWN should win")
	}
}

// wrap breaks s into lines of n characters, as base64 (76), openssl (64)
// and xxd -p (60) do.
func wrap(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\n")
		s = s[n:]
	}
	b.WriteString(s + "\n")
	return b.String()
}

func TestScrubWrappedEncodings(t *testing.T) {
	reset(t)
	Register("OPENAI_API_KEY", key)
	environ := "HOME=/root\x00PATH=/usr/bin:/bin\x00OPENAI_API_KEY=" + key + "\x00TERM=xterm\x00"
	for pre := range 40 {
		blob := strings.Repeat("x", pre) + environ
		for name, text := range map[string]string{
			"base64 76":   wrap(base64.StdEncoding.EncodeToString([]byte(blob)), 76),
			"base64 64":   wrap(base64.StdEncoding.EncodeToString([]byte(blob)), 64),
			"xxd -p 60":   wrap(hex.EncodeToString([]byte(blob)), 60),
			"base64 CRLF": strings.ReplaceAll(wrap(base64.StdEncoding.EncodeToString([]byte(blob)), 76), "\n", "\r\n"),
		} {
			in := "== /proc/1/environ\n" + text + "probe done.\n"
			if !Contains([]byte(in)) {
				t.Errorf("%s, %d bytes before: Contains = false; want true", name, pre)
			}
			got := Scrub(in)
			joined := strings.NewReplacer("\n", "", "\r", "").Replace(got)
			for _, f := range Forms(key) {
				if strings.Contains(joined, f) {
					t.Errorf("%s, %d bytes before: Scrub left form %q across lines:\n%s", name, pre, f, got)
				}
			}
			if !strings.HasPrefix(got, "== /proc/1/environ\n") || !strings.HasSuffix(got, "\nprobe done.\n") {
				t.Errorf("%s: the lines around the encoded block changed:\n%s", name, got)
			}
			if b := ScrubBytes([]byte(in)); string(b) != got {
				t.Errorf("%s: ScrubBytes = %q; want %q as Scrub", name, b, got)
			}
		}
	}
	// Lines of words are not encoded blocks: nothing is joined.
	words := "PASS\nok  \tpkg\t0.1s\nFAIL\nsomething\nelse entirely here\n"
	if got := Scrub(words); got != words {
		t.Errorf("Scrub(%q) = %q; want it unchanged", words, got)
	}
}
