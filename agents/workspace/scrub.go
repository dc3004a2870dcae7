package workspace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/statgraph/statgraph/internal/secret"
)

// Scrubbed returns the files the last Commit recorded with a secret
// replaced by secret.Marker (see Commit), or nil. It is safe for
// concurrent use.
func (w *Workspace) Scrubbed() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.lastScrubbed)
}

// takeScrubbed moves the files the scans read with a secret in them since
// the last commit into lastScrubbed and returns the commit message's
// warning about them ("" when there are none). The caller holds w.mu.
func (w *Workspace) takeScrubbed() string {
	paths := w.scan.stat.scrubbed
	w.scan.stat.scrubbed = nil
	w.lastScrubbed = paths
	if len(paths) == 0 {
		return ""
	}
	return fmt.Sprintf("\n\nwarning: statgraph replaced a secret with %s in: %s", secret.Marker, strings.Join(paths, ", "))
}
