package dispatch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/tasks"
)

// TestGoCacheLayersCapped: in a chain of 100 tasks, each with a kept
// build cache, the last task's sandbox searches the caches of its nearest
// maxGoCacheLayers dependencies, nearest first, not all 99.
func TestGoCacheLayersCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"tasks": [`)
	for i := 1; i <= 100; i++ {
		if i > 1 {
			fmt.Fprintf(&b, `,{"id": %d, "title": "t%d", "dependencies": [%d]}`, i, i, i-1)
		} else {
			b.WriteString(`{"id": 1, "title": "t1"}`)
		}
	}
	b.WriteString("]}")
	f, err := tasks.Parse("tasks.json", []byte(b.String()), "")
	require.NoError(t, err)
	plan := Plan{Dir: t.TempDir()}
	for i := 1; i < 100; i++ {
		require.NoError(t, os.MkdirAll(layerDir(plan, fmt.Sprint(i)), 0o755))
	}
	d := &Dispatcher{File: f}
	got := d.goCacheLayers(plan, "100")
	require.Len(t, got, maxGoCacheLayers)
	for i, dir := range got {
		assert.Equal(t, layerDir(plan, fmt.Sprint(99-i)), dir, "layer %d", i)
	}
	assert.Equal(t, []string{layerDir(plan, "1")}, d.goCacheLayers(plan, "2"), "a short chain keeps every layer")
	assert.Equal(t, filepath.Join(plan.Dir, "cache", ".layers", "99"), got[0])
}
