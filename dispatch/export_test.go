package dispatch

// SetLandPoint makes f the landing's test hook (landPoint) until the
// returned function restores it.
func SetLandPoint(f func(point, unit string)) (restore func()) {
	old := landPoint
	landPoint = f
	return func() { landPoint = old }
}

// PointChecked is pointChecked, for the tests of package dispatch_test.
const PointChecked = pointChecked
