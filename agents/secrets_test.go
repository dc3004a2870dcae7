package agents

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/verifier"
)

// canary is the API key of TestAPIKeyNeverLeaks; it may appear only in the
// Authorization header.
const canary = "sk-canary-5d1e9b27c4a84f03"

// TestAPIKeyNeverLeaks runs tasks with the key from OPENAI_API_KEY and a
// server that echoes it in its error messages, then looks for it in the
// log, the checkpoints, the commits, the model's prompts, the returned
// error and the environment a check sees.
func TestAPIKeyNeverLeaks(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", canary)
	for _, tc := range []struct {
		name    string
		answers []llmtest.Reply
		failed  bool // the run ends with an error
		logs    string
	}{{
		name: "retry, fail, fix",
		answers: []llmtest.Reply{
			llmtest.Error(http.StatusTooManyRequests, "Rate limit reached for key "+canary, "").WithHeader("Retry-After", "1"),
			planAnswer(), attemptN(1), fixAnswer,
		},
		logs: "Rate limit reached for key",
	}, {
		name:    "401 echoing the key",
		answers: []llmtest.Reply{llmtest.Error(http.StatusUnauthorized, "Incorrect API key provided: "+canary, "")},
		failed:  true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			envFile := filepath.Join(t.TempDir(), "env.txt")
			checks := append(goChecks(), verifier.Check{
				Name: "env", Mode: verifier.Informational,
				Command: verifier.Command{Argv: []string{"sh", "-c", `env > "$0"`, envFile}},
			})
			r := newRig(t, "t10", rigOptions{checks: checks, client: func(c *llm.Config) {
				c.APIKey = llm.ConfigFromEnv().APIKey
			}}, tc.answers...)
			cp := statgraph.NewMemoryCheckpointer(true)
			g, err := NewGraph(r.cfg, statgraph.WithCheckpointer(cp))
			require.NoError(t, err)
			out, err := g.Invoke(ctx, TaskState{Task: task("t10"), MaxRetries: 3}, statgraph.WithThread("t10"))

			require.NotEmpty(t, r.srv.AuthHeaders())
			assert.Equal(t, "Bearer "+canary, r.srv.AuthHeaders()[0], "the canary is the key in use")
			if tc.failed {
				require.ErrorIs(t, err, llm.ErrAuth)
				assert.NotContains(t, err.Error(), canary, "error")
				assert.Contains(t, err.Error(), "Incorrect API key provided")
			} else {
				require.NoError(t, err)
				assert.Equal(t, PhaseDone, out.Phase)
				assert.Equal(t, 2, out.RetryCount)
				env, err := os.ReadFile(envFile)
				require.NoError(t, err)
				assert.Contains(t, string(env), "PATH=", "the env check ran")
				assert.NotContains(t, string(env), canary, "check environment")
				assert.NotContains(t, string(env), "OPENAI_API_KEY", "check environment")
			}

			assert.Contains(t, r.log.String(), tc.logs)
			assert.NotContains(t, r.log.String(), canary, "log")
			assert.NotContains(t, strings.Join(r.srv.RawBodies(), "\n"), canary, "request bodies")
			assert.NotContains(t, gittest.Git(t, r.ws.Dir(), "log", "-p", "--all"), canary, "commits")

			cps, err := cp.Range(ctx, "t10", 0, 0, 0)
			require.NoError(t, err)
			require.NotEmpty(t, cps)
			for _, c := range cps {
				assert.NotEmpty(t, c.State, "checkpoint %d is encoded", c.ID)
				for what, b := range map[string][]byte{"state": c.State, "extra": c.Extra} {
					assert.False(t, bytes.Contains(b, []byte(canary)), "checkpoint %d %s", c.ID, what)
				}
				for _, p := range c.Pending {
					assert.NotContains(t, string(p.Update), canary, "checkpoint %d pending write", c.ID)
				}
			}
		})
	}
}
