package secret

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// streamed writes in through a Stream of the current secrets in pieces of
// the given size and returns what came out and Scrubbed.
func streamed(t *testing.T, in string, piece int) (string, bool) {
	t.Helper()
	var out bytes.Buffer
	z := Current().NewStream(&out)
	for i := 0; i < len(in); i += piece {
		if n, err := z.Write([]byte(in[i:min(i+piece, len(in))])); err != nil || n != min(piece, len(in)-i) {
			t.Fatalf("Write = %d, %v", n, err)
		}
		if len(z.buf) > streamMax+2*streamChunk {
			t.Fatalf("the stream holds %d bytes, more than its bound", len(z.buf))
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String(), z.Scrubbed()
}

// TestStreamEqualsScrub: text of several MiB with every form of a secret
// planted on each side of, and across, every MiB boundary (where the
// stream tries to cut), as plain text, in a wrapped base64 block and in a
// long line; written in pieces of many sizes, the stream's output equals
// Scrub's on the whole text. With no overlap kept between segments the
// forms across the boundaries are left in.
func TestStreamEqualsScrub(t *testing.T) {
	reset(t)
	Register("OPENAI_API_KEY", key)
	const pem = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----"
	Add(pem) // a credential file's value, lines and all
	text := sourceText(t, 6*streamChunk)
	r := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	at := 0
	for k := 1; k < 6; k++ {
		for _, off := range []int{-len(key) - 3, -len(key) / 2, -7, -1, 0, 3} {
			pos := k*streamChunk + off + r.IntN(5)
			if pos <= at {
				continue
			}
			b.WriteString(text[at:pos])
			f := append(Forms(key), pem, pem)
			b.WriteString(f[r.IntN(len(f))])
			at = pos
		}
		// A wrapped base64 block holding the key, then a long line.
		blob := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("y", r.IntN(40)) + "KEY=" + key + "\x00PATH=/bin"))
		b.WriteString("\n" + wrap(blob, 76))
		b.WriteString(strings.Repeat("z", r.IntN(3000)) + key + strings.Repeat("z", r.IntN(3000)) + "\n")
	}
	b.WriteString(text[at:])
	in := b.String()
	want := Scrub(in)
	if want == in {
		t.Fatal("Scrub replaced nothing: the test plants nothing")
	}
	for _, piece := range []int{1<<12 + 1, streamChunk - 1, len(in)} {
		got, scrubbed := streamed(t, in, piece)
		if got != want {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Errorf("pieces of %d: the stream differs from Scrub at byte %d: %q; want %q", piece, i, got[max(0, i-40):min(len(got), i+40)], want[max(0, i-40):min(len(want), i+40)])
		}
		if !scrubbed {
			t.Errorf("pieces of %d: Scrubbed = false", piece)
		}
	}
}

// TestStreamLongRuns: 12 MiB with no line break, and a wrapped base64
// block of 12 MiB, neither of which the stream may hold whole, both dense
// with the key (so wherever the stream cuts, it cuts near one): every
// form is still replaced, and the stream holds no more than its bound.
func TestStreamLongRuns(t *testing.T) {
	reset(t)
	Register("OPENAI_API_KEY", key)
	var line, block strings.Builder
	for line.Len() < 12*streamChunk {
		line.WriteString(key + "q")
	}
	raw := make([]byte, 9*streamChunk)
	for i := 0; i+len(key) < len(raw); i += len(key) + 1 + i%3 {
		copy(raw[i:], key)
	}
	block.WriteString(wrap(base64.StdEncoding.EncodeToString(raw), 76))
	for name, in := range map[string]string{"one line": line.String(), "wrapped block": block.String()} {
		got, _ := streamed(t, in, 1<<15)
		joined := strings.NewReplacer("\n", "", "\r", "").Replace(got)
		for _, f := range Forms(key) {
			if strings.Contains(joined, f) {
				j := strings.Index(joined, f)
				t.Errorf("%s: form %q left in at %d of %d: %q", name, f, j, len(joined), joined[max(0, j-100):min(len(joined), j+100)])
			}
		}
	}
}

// TestStreamNothingRegistered: with no secret the stream passes bytes
// through unchanged.
func TestStreamNothingRegistered(t *testing.T) {
	reset(t)
	in := sourceText(t, 3*streamChunk)
	if got, scrubbed := streamed(t, in, 4096); got != in || scrubbed {
		t.Errorf("the stream changed the text with no secret registered (scrubbed %v)", scrubbed)
	}
}

// TestScrubWrappedBesideAForm: a base64 block dense with the key, so that
// a line holding a whole form (replaced) is followed by a form wrapped
// over the line break. Scrub leaves no form in the text joined back. The
// old Scrub joined runs only after replacing the whole forms, and a line
// holding a Marker broke the run, so such a wrapped form was left in.
func TestScrubWrappedBesideAForm(t *testing.T) {
	reset(t)
	Register("OPENAI_API_KEY", key)
	raw := make([]byte, 4096)
	for i := 0; i+len(key) < len(raw); i += len(key) + 1 + i%3 {
		copy(raw[i:], key)
	}
	got := Scrub(wrap(base64.StdEncoding.EncodeToString(raw), 76))
	joined := strings.NewReplacer("\n", "", "\r", "").Replace(got)
	for _, f := range Forms(key) {
		if strings.Contains(joined, f) {
			t.Errorf("form %q left in", f)
		}
	}
}
