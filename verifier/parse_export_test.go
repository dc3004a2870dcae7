package verifier

// The whole-output parsers below exist for the tests and fuzz targets: a
// check feeds its parser line by line as the output streams (analyze.go).

// ParseGoTestJSON extracts the failures from `go test -json` output. Lines
// that are not JSON events (such as compiler errors printed by older Go
// versions) are used to explain build failures. It never panics; output
// that is not go test -json yields no failures.
func ParseGoTestJSON(output string) []Failure {
	p := newGoTestJSONParser()
	feedLines(output, p.line)
	return p.failures()
}

// ParseGoTestVerbose extracts the failures from plain `go test` or
// `go test -v` output ("--- FAIL: TestX" lines and the package summary
// lines). It never panics.
func ParseGoTestVerbose(output string) []Failure {
	p := newGoTestTextParser()
	feedLines(output, p.line)
	return p.failures()
}
