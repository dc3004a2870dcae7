package agents

import (
	"strings"

	"github.com/statgraph/statgraph/internal/secret"
)

// AgentEnviron returns the environment (KEY=VALUE entries) from which the
// variables passed to agent CLIs by name are taken: CommandExecutor.Env,
// a preset's variables, the proxies, run's --allow-env. It is the one
// place statgraph reads them: the process environment plus the secrets
// statgraph took out of it at start-up (see internal/secret.Isolate). It
// is safe for concurrent use.
func AgentEnviron() []string {
	return secret.Environ()
}

// agentEnv returns the entries of env (an AgentEnviron result) whose name
// is name, or starts with the prefix before a trailing '*', in env's order.
func agentEnv(env []string, name string) []string {
	prefix, all := strings.CutSuffix(name, "*")
	var out []string
	for _, kv := range env {
		n, _, ok := strings.Cut(kv, "=")
		if ok && n != "" && (n == name || (all && strings.HasPrefix(n, prefix))) {
			out = append(out, kv)
		}
	}
	return out
}
