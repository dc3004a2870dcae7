package agents

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPresetLimits feeds each preset's limit parser the messages its CLI
// prints at a usage or rate limit, with a fixed now in a fixed local zone,
// and checks the reset time read, and that other output is not a limit.
func TestPresetLimits(t *testing.T) {
	local := time.FixedZone("local", 2*3600)
	now := time.Date(2026, 11, 28, 10, 30, 0, 0, local)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		preset string
		out    string
		want   time.Time // zero: no limit
	}{
		{"claude", "5-hour limit reached ∙ resets 3pm\n", time.Date(2026, 11, 28, 15, 0, 0, 0, local)},
		{"claude", "Claude usage limit reached. Your limit will reset at 3pm (America/New_York).", time.Date(2026, 11, 28, 15, 0, 0, 0, ny)},
		{"claude", `{"type":"result","is_error":true,"result":"Claude AI usage limit reached|1795000000"}`, time.Unix(1795000000, 0)},
		{"claude", "Weekly limit reached ∙ resets 9:15am", time.Date(2026, 11, 29, 9, 15, 0, 0, local)},
		{"claude", "usage limit reached, resets 10:30", time.Date(2026, 11, 29, 10, 30, 0, 0, local)},
		{"claude", "Error: the tests failed: 3 of 10", time.Time{}},
		{"claude", "limit reached", time.Time{}},
		{"codex", "ERROR: You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 2 hours.", now.Add(2 * time.Hour)},
		{"codex", "You've hit your usage limit. Try again in 4 days 13 hours 12 minutes.", now.Add(4*24*time.Hour + 13*time.Hour + 12*time.Minute)},
		{"codex", `{"type":"error","message":"Rate limit reached for gpt-5 in organization org-1 on tokens per min (TPM). Please try again in 1.5s."}`, now.Add(1500 * time.Millisecond)},
		{"codex", "You've hit your usage limit. Try again at 3:05 PM.", time.Date(2026, 11, 28, 15, 5, 0, 0, local)},
		{"codex", "Rate limit reached: try again in 6m0s", now.Add(6 * time.Minute)},
		{"codex", "try again in 2 hours", time.Time{}},
		{"gemini", "Quota exceeded for quota metric 'Generate Content API requests per minute'. Please retry in 29.5s.", now.Add(29500 * time.Millisecond)},
		{"gemini", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"retryDelay": "44s"}]}}`, now.Add(44 * time.Second)},
		{"gemini", "Quota exceeded for quota metric; check your plan", time.Time{}},
		{"qwen", "[API Error: 429 Rate limit exceeded. Please try again in 20 seconds]", now.Add(20 * time.Second)},
		{"qwen", "Qwen OAuth quota exceeded: your free daily quota is used up, try again tomorrow.", time.Date(2026, 11, 29, 0, 0, 0, 0, local)},
		{"qwen", "Quota exceeded for quota metric. Please retry in 3s.", now.Add(3 * time.Second)},
		{"opencode", "AI_APICallError: Rate limit reached for requests. Please try again in 20ms.", now.Add(20 * time.Millisecond)},
		{"opencode", "Error: usage limit reached, resets 11pm", time.Date(2026, 11, 28, 23, 0, 0, 0, local)},
		{"opencode", "Error: 429 Too Many Requests: retry in 1m30s", now.Add(90 * time.Second)},
		{"opencode", "ok: wrote main.go", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.preset+"/"+tt.out, func(t *testing.T) {
			p, ok := Preset(tt.preset)
			if !ok || p.Limit == nil {
				t.Fatalf("preset %s has no limit parser", tt.preset)
			}
			until, reason, ok := p.Limit(tt.out, now)
			if tt.want.IsZero() {
				if ok {
					t.Errorf("limit until %v (%q); want none", until, reason)
				}
				return
			}
			if !ok {
				t.Fatalf("no limit read; want until %v", tt.want)
			}
			if !until.Equal(tt.want) {
				t.Errorf("until %v; want %v", until, tt.want)
			}
			if reason == "" {
				t.Error("no reason")
			}
		})
	}
}

func TestParseDurationWords(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"2 hours.", 2 * time.Hour},
		{"1.5s.", 1500 * time.Millisecond},
		{"20ms", 20 * time.Millisecond},
		{"6m0s", 6 * time.Minute},
		{"1 hour and 5 minutes", time.Hour + 5*time.Minute},
		{"3 days, 2 hrs", 3*24*time.Hour + 2*time.Hour},
		{"30 seconds or so", 30 * time.Second},
		{"a while", 0},
		{"5 apples", 0},
	}
	for _, tt := range tests {
		got, ok := parseDurationWords(tt.in)
		if got != tt.want || ok != (tt.want > 0) {
			t.Errorf("parseDurationWords(%q) = %v, %v; want %v", tt.in, got, ok, tt.want)
		}
	}
}

func TestBillingLine(t *testing.T) {
	if got := billingLine("starting\nCredit balance is too low\n"); got != "Credit balance is too low" {
		t.Errorf("billingLine = %q; want the credit line", got)
	}
	if got := billingLine("edited billing.go\n"); got != "" {
		t.Errorf("billingLine = %q; want none for ordinary output", got)
	}
}

// TestRealCLILimitsNoReset feeds the claude and codex presets what their
// real CLIs printed when every request got HTTP 429 with no reset time
// (testdata/limits/, recorded with the versions CI pins): each is a limit
// with no reset (until zero), its reason the CLI's error, not the JSON
// around it; a zero-exit output that mentions 429 in passing is no limit.
func TestRealCLILimitsNoReset(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC)
	tests := []struct {
		preset, file, reason string
	}{
		{"claude", "claude.txt", "Request rejected (429) · Rate limit reached for requests. Please try again in 2h0m0s."},
		{"codex", "codex.txt", "exceeded retry limit, last status: 429 Too Many Requests"},
	}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", "limits", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			p, _ := Preset(tt.preset)
			until, reason, ok := p.Limit(string(out), now)
			if !ok {
				t.Fatalf("%s's output at a 429 is not read as a limit", tt.preset)
			}
			if !until.IsZero() {
				t.Errorf("until %v; want zero (no reset time given)", until)
			}
			if reason != tt.reason {
				t.Errorf("reason %q; want %q", reason, tt.reason)
			}
		})
	}
	for _, preset := range []string{"claude", "codex", "opencode"} {
		p, _ := Preset(preset)
		if until, reason, ok := p.Limit("fixed the handler for status 200 and 404; tests pass\n", now); ok {
			t.Errorf("%s: limit until %v (%q) read from ordinary output", preset, until, reason)
		}
	}
}
