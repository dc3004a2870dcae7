package proc

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestFilterEnv(t *testing.T) {
	t.Parallel()
	env := []string{
		"PATH=/bin", "HOME=/root", "LC_ALL=C", "GOCACHE=/c", "GO111MODULE=on", "CGO_ENABLED=0",
		"GOOGLE_API_KEY=x", "GOPRIVATE_TOKEN=x", "AWS_SECRET_ACCESS_KEY=x", "OPENAI_BASE_URL=x",
		"github_token=x", "EDITOR=vim", "GOX_=x", "malformed", "=novalue",
	}
	got := FilterEnv(env, []string{"EDITOR"})
	want := []string{"PATH=/bin", "HOME=/root", "LC_ALL=C", "GOCACHE=/c", "GO111MODULE=on", "CGO_ENABLED=0", "EDITOR=vim"}
	if !slices.Equal(got, want) {
		t.Errorf("FilterEnv = %q; want %q", got, want)
	}
}

func TestCapBuffer(t *testing.T) {
	t.Parallel()
	data := []byte(strings.Repeat("line of text\n", 1000))
	for _, max := range []int{2, 3, 10, 64, 1000, len(data) - 1, len(data), len(data) + 1} {
		for _, chunk := range []int{1, 7, 100, len(data)} {
			t.Run(strconv.Itoa(max)+"/"+strconv.Itoa(chunk), func(t *testing.T) {
				t.Parallel()
				b := NewCapBuffer(max)
				for p := data; len(p) > 0; {
					k := min(chunk, len(p))
					n, err := b.Write(p[:k])
					if err != nil || n != k {
						t.Fatalf("Write = %d, %v; want %d, nil", n, err, k)
					}
					p = p[k:]
				}
				out := b.String()
				if max >= len(data) {
					if out != string(data) {
						t.Errorf("String = %q; want everything written", out)
					}
					if b.Dropped() != 0 {
						t.Errorf("Dropped = %d; want 0", b.Dropped())
					}
					return
				}
				marker := DropMarker(b.Dropped())
				head, tail, ok := strings.Cut(out, marker)
				if !ok {
					t.Fatalf("no marker in %q", out)
				}
				if !bytes.HasPrefix(data, []byte(head)) {
					t.Errorf("head %q is not a prefix of what was written", head)
				}
				if !bytes.HasSuffix(data, []byte(tail)) {
					t.Errorf("tail %q is not a suffix of what was written", tail)
				}
				if len(head)+len(tail) > max {
					t.Errorf("kept %d bytes; want at most %d", len(head)+len(tail), max)
				}
				if got := int64(len(head)+len(tail)) + b.Dropped(); got != int64(len(data)) {
					t.Errorf("kept + dropped = %d; want %d", got, len(data))
				}
			})
		}
	}
}
