package dispatch

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/statgraph/statgraph/verifier"
)

// TestIntegrationFailedEnforcesAsGates: an integration fails when a unit
// is left out or a failed check blocks, by the one enforcement rule
// (gate.Enforce): a check of the zero Mode blocks, an advisory or
// informational one does not.
func TestIntegrationFailedEnforcesAsGates(t *testing.T) {
	failed := func(m verifier.Mode) Integration {
		return Integration{Units: []IntegratedUnit{{Merged: true}}, Checks: []verifier.CheckResult{{Passed: false, Mode: m}}}
	}
	for _, c := range []struct {
		mode verifier.Mode
		want bool
	}{{"", true}, {verifier.Blocking, true}, {verifier.Advisory, false}, {verifier.Informational, false}} {
		assert.Equal(t, c.want, failed(c.mode).Failed(), "a failed check of mode %v", c.mode)
	}
	assert.False(t, Integration{Units: []IntegratedUnit{{Merged: true}}, Checks: []verifier.CheckResult{{Passed: true}}}.Failed())
	assert.True(t, Integration{Units: []IntegratedUnit{{Merged: false}}}.Failed(), "a unit left out")
}
