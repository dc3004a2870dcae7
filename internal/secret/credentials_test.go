package secret

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCredentialValues(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string
	}{
		{"codex auth.json", `{"OPENAI_API_KEY": "sk-codex-canary-1", "tokens": {"id_token": "eyJhbGciOi.eyJzdWIi.sig", "account_id": "acct-1234"},
			"last_refresh": "2025-01-01T00:00:00Z"}`, []string{"sk-codex-canary-1", "eyJhbGciOi.eyJzdWIi.sig"}},
		{"claude.json", `{"userID": "0123456789abcdef0123456789abcdef0123456789abcdef", "model": "claude-3-5-sonnet-20241022",
			"projects": {"/home/u/src/project": {"allowedTools": []}}, "primaryApiKey": "sk-ant-api03-Zz9"}`,
			[]string{"0123456789abcdef0123456789abcdef0123456789abcdef", "sk-ant-api03-Zz9"}},
		{".env", "# comment\nexport DATABASE_PASSWORD='hunter2hunter2'\nNODE_ENV=development\nPORT=8080\n" +
			"STRIPE_KEY=\"rk_live_51Habc\"\nDATABASE_URL=postgres://app:s3cr3t-pw@db:5432/app\nUPLOAD_DIR=/var/tmp/uploads\n" +
			"SIGNING=Qm9vdHN0cmFwVG9rZW4xMjM0NTY3OA\n",
			[]string{"hunter2hunter2", "rk_live_51Habc", "s3cr3t-pw", "postgres://app:s3cr3t-pw@db:5432/app", "Qm9vdHN0cmFwVG9rZW4xMjM0NTY3OA"}},
		{"yaml", "github.com:\n    user: someone\n    oauth_token: gho_abcdefgh\n    git_protocol: https\n", []string{"gho_abcdefgh"}},
		{"netrc", "machine api.example.com login someone password pa55word-x\n", []string{"pa55word-x"}},
		{"git-credentials", "https://someone:ghp_tokenvalue9@github.com\n", []string{"ghp_tokenvalue9", "https://someone:ghp_tokenvalue9@github.com"}},
		{"plain settings", `{"theme": "dark-high-contrast", "editor": "vim", "model": "gpt-4o-2024-08-06", "homepage": "https://example.com/x"}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.ElementsMatch(t, tc.want, CredentialValues([]byte(tc.data)))
		})
	}
}

func TestAddCredentialsScrubs(t *testing.T) {
	reset(t)
	n := AddCredentials([]byte("API_TOKEN=canary-token-0042\n"))
	assert.Equal(t, 1, n)
	assert.Equal(t, "got "+Marker, Scrub("got canary-token-0042"))
}

// BenchmarkScrubWithCredentials: Scrub of 1.2 MB of test output with the
// API key alone and with 20 more values from credential files registered.
func BenchmarkScrubWithCredentials(b *testing.B) {
	out := []byte(strings.Repeat("--- FAIL: TestSomething (0.00s)\n    x_test.go:12: got 3, want 4\n", 1<<14))
	for _, n := range []int{0, 20} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			reset(b)
			Register("OPENAI_API_KEY", key)
			for i := range n {
				AddCredentials(fmt.Appendf(nil, "TOKEN_%d=Tok%dCanaryValue0123456789\n", i, i))
			}
			b.SetBytes(int64(len(out)))
			for b.Loop() {
				_ = ScrubBytes(out)
			}
		})
	}
}
