package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordedStandIn is the body of a stand-in agent CLI named NAME that
// prints, on its first run, what the real CLI printed when its model
// server answered every request with a bare HTTP 429 (the file OUT, a copy
// of agents/testdata/limits/NAME.txt) and exits 1, changing nothing.
// Later runs create NAME.txt and exit 0. Each run appends its start time
// to .rec/NAME/runs in the workspace.
const recordedStandIn = `#!/bin/sh
d=.rec/NAME
mkdir -p "$d"
cat > /dev/null
if [ ! -f "$d/runs" ]; then
  date +%s.%N >> "$d/runs"
  cat 'OUT'
  exit 1
fi
date +%s.%N >> "$d/runs"
echo "made by NAME" > NAME.txt
`

// TestRealCLILimitParksDefault: the outputs the real claude and codex
// CLIs print when they give up on a 429 carry no reset time; each task is
// parked for --park-default (2s here), its reason saying so, and the run
// starts the CLI again after that wait, by itself; both end done with one
// verification.
func TestRealCLILimitParksDefault(t *testing.T) {
	t.Parallel()
	presets := []string{"claude", "codex"}
	dir, stubs := limitStandIns(t, presets, recordedStandIn)
	env := []string{"PATH=" + stubs + string(os.PathListSeparator) + os.Getenv("PATH")}
	r := statgraphEnv(t, dir, env, "run", noSandbox, "-j", "2", "--park-default", "2s", "--keep-workspaces", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	plan := planOf(t, dir, "tasks.json", "")
	for _, name := range presets {
		t.Run(name, func(t *testing.T) {
			assert.Contains(t, r.stderr, "task "+name+" parked: parked until")
			assert.Contains(t, r.stderr, "no reset time given: waiting --park-default 2s")
			row, ok := statusRowOf(t, dir, name)
			require.True(t, ok, "status shows task %s", name)
			assert.Equal(t, "done", row.Status)
			assert.Equal(t, 1, row.Attempts, "the limit used no retry")
			runs := strings.Fields(readFile(t, filepath.Join(plan.WorkDir(), name, ".rec", name, "runs")))
			require.Len(t, runs, 2, "the CLI ran again after the default wait")
			first, err := strconv.ParseFloat(runs[0], 64)
			require.NoError(t, err)
			second, err := strconv.ParseFloat(runs[1], 64)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, second-first, 1.5, "started again only after the default wait")
		})
	}
}

// limitStandIns makes a repository whose tasks.json has one task per preset
// (id and executor the preset's name, its check a file named after it), and
// a directory of stand-in CLIs named after the presets: script (NAME and OUT
// replaced) printing the preset's recorded limit output from
// agents/testdata/limits.
func limitStandIns(t *testing.T, presets []string, script string) (dir, stubs string) {
	t.Helper()
	var units []string
	for _, name := range presets {
		units = append(units, fmt.Sprintf(`{"id": %q, "title": "Work of %s", "executor": %q, "test_cmd": ["test", "-f", "%s.txt"]}`, name, name, name, name))
	}
	dir = newRepo(t, map[string]string{
		"tasks.json": `{"tasks": [` + strings.Join(units, ",\n") + "]}\n",
		".gitignore": "/.rec/\n",
	})
	stubs = t.TempDir()
	for _, name := range presets {
		out, err := os.ReadFile(filepath.Join("..", "agents", "testdata", "limits", name+".txt"))
		require.NoError(t, err)
		outFile := filepath.Join(stubs, name+".out")
		require.NoError(t, os.WriteFile(outFile, out, 0o644))
		src := strings.NewReplacer("NAME", name, "OUT", outFile).Replace(script)
		require.NoError(t, os.WriteFile(filepath.Join(stubs, name), []byte(src), 0o755))
	}
	return dir, stubs
}
