package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestVersionOf: the version names the module version and, when the build
// recorded one, the VCS revision and whether the tree had changes; it is
// never a bare "dev".
func TestVersionOf(t *testing.T) {
	rev := "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"
	build := func(version string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/statgraph/statgraph", Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"checkout with changes", build("(devel)", "vcs", "git", "vcs.revision", rev, "vcs.modified", "true"), true, "(devel) 1a2b3c4d5e6f+dirty"},
		{"clean checkout", build("(devel)", "vcs.revision", rev, "vcs.modified", "false"), true, "(devel) 1a2b3c4d5e6f"},
		{"pseudo-version from a dirty checkout", build("v0.0.0-20261124211041-1a2b3c4d5e6f+dirty", "vcs.revision", rev, "vcs.modified", "true"), true,
			"v0.0.0-20261124211041-1a2b3c4d5e6f+dirty"},
		{"pseudo-version from a clean checkout", build("v0.0.0-20261124211041-1a2b3c4d5e6f", "vcs.revision", rev, "vcs.modified", "false"), true,
			"v0.0.0-20261124211041-1a2b3c4d5e6f"},
		{"go install at a tag", build("v1.2.0"), true, "v1.2.0"},
		{"no VCS information", build("(devel)"), true, "(devel) (no VCS revision: built outside a git checkout or with -buildvcs=false)"},
		{"no build information", nil, false, "(unknown: the binary has no build information)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, versionOf(tt.bi, tt.ok))
		})
	}
}
