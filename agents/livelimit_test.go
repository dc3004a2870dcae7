package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLiveLimitOnRecordings feeds the gemini and opencode presets' live
// watch what their real CLIs printed while every request got HTTP 429
// (testdata/limits/), in small writes as a pipe gives them: each stops at
// the line named, and the preset's Limit reads the server's reset from
// the output so far (two hours). Ordinary output, and gemini's own
// retries before it gives up, stop nothing.
func TestLiveLimitOnRecordings(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC)
	tests := []struct {
		preset, file, line string
	}{
		{"gemini", "gemini.txt", "Attempt 5 failed: Rate limit reached for requests. Please try again in 2h0m0s.. Max attempts reached"},
		{"opencode", "opencode.txt", `agent=title mode=primary error.error="AI_RetryError: Failed after 3 attempts.`},
	}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", "limits", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			p, _ := Preset(tt.preset)
			if p.LiveLimit == nil {
				t.Fatalf("the %s preset has no live limit", tt.preset)
			}
			stops := 0
			w := &liveWatch{match: p.LiveLimit, stop: func() { stops++ }}
			var seen strings.Builder
			for chunk := range pieces(out, 7) {
				if w.line == "" {
					seen.Write(chunk)
				}
				w.Write(chunk)
			}
			if stops != 1 || !strings.Contains(w.line, tt.line) {
				t.Fatalf("stopped %d times at %q; want once, at a line holding %q", stops, w.line, tt.line)
			}
			until, _, ok := p.Limit(seen.String(), now)
			if !ok || !until.Equal(now.Add(2*time.Hour)) {
				t.Errorf("limit read from the output so far: %v, %v; want %v", until, ok, now.Add(2*time.Hour))
			}
		})
	}
	for _, preset := range []string{"gemini", "opencode"} {
		p, _ := Preset(preset)
		for _, line := range []string{
			"fixed the handler for status 200 and 404; tests pass",
			`Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {"error":{"code":429}}`,
			`timestamp=2026-11-28T15:10:01.429Z level=ERROR message="Failed to fetch models.dev"`,
		} {
			if p.LiveLimit(line) {
				t.Errorf("%s: stopped at %q", preset, line)
			}
		}
	}
}

// pieces yields b in pieces of n bytes.
func pieces(b []byte, n int) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			k := min(n, len(b))
			if !yield(b[:k]) {
				return
			}
			b = b[k:]
		}
	}
}
