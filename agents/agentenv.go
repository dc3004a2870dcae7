package agents

import (
	"os"
	"sort"
	"strings"
)

// AgentEnv returns the value of the environment variable name as agent
// CLIs should see it, and whether it is set. Every variable statgraph
// passes to an agent CLI by name (CommandExecutor.Env, a preset's
// variables, the proxies) is read here and nowhere else, so that where
// statgraph keeps its secrets can change in one place. It is safe for
// concurrent use.
func AgentEnv(name string) (string, bool) {
	return os.LookupEnv(name)
}

// agentEnvNames returns the names of the set variables starting with
// prefix, sorted.
func agentEnvNames(prefix string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "" && strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
