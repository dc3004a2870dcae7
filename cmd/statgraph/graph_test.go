package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGraphCommand: statgraph graph draws the orchestrator in each format
// Graph.Draw knows, and another format is a usage error naming them.
func TestGraphCommand(t *testing.T) {
	for format, start := range map[string]string{"mermaid": "flowchart TD\n", "dot": "digraph statgraph {\n", "svg": "<svg "} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{"graph", "--format", format}, &stdout, &stderr)
		assert.Equal(t, exitOK, code, "%s: %s", format, stderr.String())
		assert.True(t, strings.HasPrefix(stdout.String(), start), "%s: %.40q", format, stdout.String())
		assert.Contains(t, stdout.String(), "executor", format)
	}
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"graph", "--format", "png"}, &stdout, &stderr)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr.String(), `graph: unknown format "png"; use mermaid, dot or svg`)
	assert.Empty(t, stdout.String())
}
