package proc

import (
	"os"
	"strings"

	"github.com/statgraph/statgraph/internal/secret"
)

// allowedEnv lists the parent environment variables a child sees by name.
var allowedEnv = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "LANGUAGE": true, "TMPDIR": true, "TERM": true, "TZ": true,
	"CC": true, "CXX": true, "XDG_CACHE_HOME": true, "XDG_CONFIG_HOME": true,
	"NO_COLOR": true, "CI": true,
}

// FilterEnv returns the entries of env (KEY=VALUE) that a child process may
// inherit: PATH, HOME, USER, LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TMPDIR,
// TERM, TZ, CC, CXX, XDG_CACHE_HOME, XDG_CONFIG_HOME, NO_COLOR, CI, CGO_*, and
// the go tool's own variables (GO followed by letters and digits only, such as
// GOPATH, GOCACHE, GOFLAGS, GOTOOLCHAIN; GOOGLE_API_KEY is not one). Of those,
// anything that looks like a secret (see IsSecretName) is dropped as well.
// Names listed in allow pass regardless of both rules. The order of env is
// kept; malformed entries without '=' are dropped.
func FilterEnv(env []string, allow []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if contains(allow, name) || (inheritable(name) && !IsSecretName(name)) {
			out = append(out, kv)
		}
	}
	return out
}

// InheritedEnv is the environment a child of verifier.Run starts with: FilterEnv of the
// process environment, plus the names in allow that are not in it but that
// secret.Lookup knows (secrets statgraph moved out of its environment).
func InheritedEnv(allow []string) []string {
	env := FilterEnv(os.Environ(), allow)
	for _, name := range allow {
		if _, set := os.LookupEnv(name); set {
			continue
		}
		if v, ok := secret.Lookup(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// IsSecretName reports whether an environment variable name looks like it
// holds a credential: *_KEY, *_TOKEN, *SECRET*, *PASSWORD*, *PASSWD*,
// *CREDENTIAL*, *APIKEY* or OPENAI_*, compared case-insensitively.
func IsSecretName(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasSuffix(n, "_KEY") || strings.HasSuffix(n, "_TOKEN") ||
		strings.HasPrefix(n, "OPENAI_") ||
		strings.Contains(n, "SECRET") || strings.Contains(n, "PASSWORD") ||
		strings.Contains(n, "PASSWD") || strings.Contains(n, "CREDENTIAL") ||
		strings.Contains(n, "APIKEY")
}

func inheritable(name string) bool {
	return allowedEnv[name] || strings.HasPrefix(name, "LC_") ||
		strings.HasPrefix(name, "CGO_") || isGoToolVar(name)
}

// isGoToolVar reports whether name is shaped like the go tool's variables:
// "GO" followed by at least one upper-case letter or digit and nothing else.
func isGoToolVar(name string) bool {
	if len(name) < 3 || !strings.HasPrefix(name, "GO") {
		return false
	}
	for _, r := range name[2:] {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
