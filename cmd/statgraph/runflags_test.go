package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// flagNames returns the flags statgraph cmd -h lists.
func flagNames(t *testing.T, cmd string) map[string]bool {
	t.Helper()
	var help bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{cmd, "-h"}, io.Discard, &help))
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(help.String(), -1) {
		names[m[1]] = true
	}
	require.NotEmpty(t, names, "statgraph %s -h:\n%s", cmd, help.String())
	return names
}

// without returns names less drop.
func without(names map[string]bool, drop ...string) []string {
	out := maps.Clone(names)
	for _, d := range drop {
		delete(out, d)
	}
	return slices.Sorted(maps.Keys(out))
}

// serve and mcp take every flag of run that sets up a run (the runs they
// start are set up as run's are: runFlags), and the usage text names
// them.
func TestServeAndMCPTakeRunFlags(t *testing.T) {
	var rf runFlags
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	rf.register(fs)
	var shared []string
	fs.VisitAll(func(f *flag.Flag) { shared = append(shared, f.Name) })

	runs := without(flagNames(t, "run"), "plain", "json", "retry-failed", "wait-for-answers", "integrate", "land", "queue", "remote", "worker-timeout")
	serves := without(flagNames(t, "serve"), "addr", "token-file", "no-token")
	mcps := without(flagNames(t, "mcp"))
	require.Equal(t, runs, serves, "serve's flags besides --addr, --token-file and --no-token")
	require.Equal(t, runs, mcps, "mcp's flags")
	for _, name := range shared {
		require.Contains(t, runs, name)
	}
	require.Subset(t, runs, []string{"request-timeout", "max-response-bytes", "keep-workspaces", "tag", "store", "repo"})

	for _, line := range []string{"statgraph serve ", "statgraph mcp "} {
		i := strings.Index(usage, line)
		require.GreaterOrEqual(t, i, 0, line)
		require.Contains(t, strings.SplitN(usage[i:], "\n", 2)[0], "[run flags]", "the usage of %q says it takes the run flags", line)
	}
	for _, name := range append(shared, "tag", "store", "repo") {
		require.Regexp(t, `-`+regexp.QuoteMeta(name)+`\b`, usage, "the usage text lists the run flag --%s", name)
	}
}
