package verifier

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/statgraph/statgraph/internal/secret"
)

// goenv.go reads the go command's settings as the user's own go commands
// see them, outside the sandbox: the environment first, then the user's
// go env file (`go env -w`: GOFLAGS, GOPROXY, GOPRIVATE...). Inside the
// sandbox HOME is empty, so the file is shown read-only at its own path
// and GOENV names it; nothing else of HOME is shown.

// goEnvFile returns the user's go env file when it exists, or "": $GOENV,
// else <user config dir>/go/env, as the go command chooses it.
func goEnvFile() string {
	file := os.Getenv("GOENV")
	if file == "off" {
		return ""
	}
	if file == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return ""
		}
		file = filepath.Join(dir, "go", "env")
	}
	if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() || !filepath.IsAbs(file) {
		return ""
	}
	return file
}

// readGoEnv parses a go env file as the go command does: KEY=VALUE lines,
// the value raw; a line without "=" or not starting with A-Z is ignored.
func readGoEnv(data []byte) map[string]string {
	m := map[string]string{}
	for line := range bytes.Lines(data) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		k, v, ok := bytes.Cut(line, []byte("="))
		if !ok || len(k) == 0 || k[0] < 'A' || k[0] > 'Z' {
			continue
		}
		m[string(k)] = string(v)
	}
	return m
}

// goSetting returns the go command's setting key: the environment's value,
// else the user's go env file's.
func goSetting(key string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	if file := goEnvFile(); file != "" {
		if data, err := os.ReadFile(file); err == nil {
			return readGoEnv(data)[key]
		}
	}
	return ""
}

// goEnvInside returns what shows the user's go env file inside the
// sandbox: GOENV naming it and its path to bind read-only (none when
// there is no file). The values in it that look like credentials (a
// GOPROXY URL with a password, a token) are added to the scrubber's set
// first, since the command can now print them.
func goEnvInside() ([]string, []string) {
	file := goEnvFile()
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil
	}
	// GOPROXY and its kin are lists: each URL is looked at on its own,
	// under a neutral name (GOPRIVATE's value is module paths, not a
	// secret, whatever its name says).
	var parts strings.Builder
	for _, v := range readGoEnv(data) {
		for p := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == ',' || r == '|' }) {
			parts.WriteString("VALUE=" + p + "\n")
		}
	}
	secret.AddCredentials([]byte(parts.String()))
	return []string{"GOENV=" + file}, []string{file}
}

// userGoCache returns the user's go build cache directory, or "" when
// there is none: GOCACHE, else <user cache dir>/go-build, as the go
// command chooses it.
func userGoCache() string {
	dir := goSetting("GOCACHE")
	if dir == "off" {
		return ""
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, "go-build")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() || !filepath.IsAbs(dir) {
		return ""
	}
	return dir
}

// userModCache returns the user's Go module cache when it exists, or "".
// It follows the go command's own defaults: GOMODCACHE, else the first
// GOPATH entry's pkg/mod, else $HOME/go/pkg/mod.
func userModCache() string {
	mod := goSetting("GOMODCACHE")
	if mod == "" {
		gopath := goSetting("GOPATH")
		if gopath == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			gopath = filepath.Join(home, "go")
		}
		mod = filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod")
	}
	if st, err := os.Stat(mod); err != nil || !st.IsDir() || !filepath.IsAbs(mod) {
		return ""
	}
	return mod
}

// readOnlyCacheNoise matches the go command's note that it could not save
// what it learned from a module proxy into the module cache, which the
// sandbox shows read-only (cmd/go/internal/modfetch): the command works
// all the same, so the line is noise in a check's output.
var readOnlyCacheNoise = regexp.MustCompile(`(?m)^go: writing (stat|go\.mod) cache: [^\n]*: read-only file system\n`)

// dropNoise returns output without readOnlyCacheNoise's lines when s is a
// sandbox with caches (nil or without CacheDir: output unchanged).
func (s *Sandbox) dropNoise(output string) string {
	if s == nil || s.CacheDir == "" || !strings.Contains(output, ": read-only file system") {
		return output
	}
	return readOnlyCacheNoise.ReplaceAllString(output, "")
}
