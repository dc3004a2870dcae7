package dispatch

// Points of a landing, or of a unit's run, at which landPoint is called
// (see landAt).
const (
	// pointChecked: the merge passed its checks; the target has not moved.
	pointChecked = "checked"
	// pointMoved: the target moved to the merge; Land has not recorded it.
	pointMoved = "moved"
	// pointPublished: a unit's branch is published (and its workspace
	// removed unless kept); its outcome is not recorded yet.
	pointPublished = "published"
)

// landPoint, when not nil, is called at each point of a landing or of a
// unit's run with the unit's id. Tests set it to kill the process there; it is nil in normal
// use. Built with the tag statgraph_testhooks (the end-to-end tests'
// binary, never the shipped one), it is set from an environment variable
// (landpoint_testhooks.go).
var landPoint func(point, unit string)

// landAt calls landPoint, if set.
func landAt(point, unit string) {
	if landPoint != nil {
		landPoint(point, unit)
	}
}
