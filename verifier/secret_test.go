package verifier

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/secret"
)

// TestRunScrubsSecretsFromOutput: a command that prints a registered
// secret, plainly and base64-encoded, leaves neither in Result.Output.
func TestRunScrubsSecretsFromOutput(t *testing.T) {
	const key = "sk-verifier-canary-5e1d9c"
	secret.Register("STATGRAPH_VERIFIER_TEST_KEY", key)
	b64 := base64.StdEncoding.EncodeToString([]byte("KEY=" + key))
	res, err := Run(context.Background(), Command{Argv: []string{"printf", "plain %s\nencoded %s\n", key, b64}})
	require.NoError(t, err)
	for _, form := range secret.Forms(key) {
		assert.NotContains(t, res.Output, form)
	}
	assert.Contains(t, res.Output, "plain [REDACTED]\n")
	assert.Contains(t, res.Output, "encoded ")
}

// TestRunAllowEnvReadsSecretStore: a secret that is no longer in the
// process environment (statgraph moved it out at start-up) still reaches a
// child that AllowEnv names, and only that child.
func TestRunAllowEnvReadsSecretStore(t *testing.T) {
	const name = "STATGRAPH_HANDED_OVER_TOKEN"
	secret.Register(name, "handed-over-value")
	show := Command{Shell: `echo "token=${STATGRAPH_HANDED_OVER_TOKEN-unset}"`}
	res, err := Run(context.Background(), show)
	require.NoError(t, err)
	assert.Equal(t, "token=unset\n", res.Output, "not named in AllowEnv: not passed")

	show.AllowEnv = []string{name}
	res, err = Run(context.Background(), show)
	require.NoError(t, err)
	// The child got the value; its output, like every captured output, is
	// scrubbed of it.
	assert.Equal(t, "token=[REDACTED]\n", res.Output, "named in AllowEnv: passed from the secret store")
}
