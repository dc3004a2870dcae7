package workspace

import "strconv"

// pushPoint, when not nil, is called at each point of PushLocal's work,
// with the push's updates: after the pack of new objects is written
// ("pack-written") and recorded ("pack-recorded"), once every ref's lock
// is held and checked ("locked"), once the new values are written in the
// locks ("written"), after the n-th new value is renamed into place
// ("renamed-n"), after packed-refs is rewritten ("packed-refs-rewritten"),
// after the n-th deletion ("deleted-n"), and at the end ("refs-updated").
// Tests set it to kill the process at one of them; it is nil in normal
// use. Built with the tag statgraph_testhooks (the end-to-end tests'
// binary, never the shipped one), it is set from an environment variable
// (pushpoint_testhooks.go).
var pushPoint func(point string, updates []RefUpdate)

// at calls pushPoint, if set, at point.
func at(point string, updates []RefUpdate) {
	if pushPoint != nil {
		pushPoint(point, updates)
	}
}

// atN calls pushPoint, if set, at the point "point-n".
func atN(point string, n int, updates []RefUpdate) {
	if pushPoint != nil {
		pushPoint(point+"-"+strconv.Itoa(n), updates)
	}
}
