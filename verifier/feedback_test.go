package verifier

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleVerification fails tests, lint and an advisory check.
func sampleVerification() Verification {
	tests := CheckResult{
		Name: "tests", Kind: KindTest, Mode: Blocking, ExitCode: 1,
		Failures: []Failure{
			{Package: "example.com/m", Test: "TestParse", Lines: []string{"parse_test.go:12: want 3, got 2"}},
			{Package: "example.com/m", Test: "TestEmpty", Lines: []string{"empty_test.go:4: unexpected error: EOF"}},
		},
		Output: "lots of go test output\n",
	}
	lint := CheckResult{
		Name: "lint", Kind: KindLint, Mode: Blocking, ExitCode: 1,
		Diagnostics: []Diagnostic{{File: "parse.go", Line: 7, Col: 2, Message: "unused variable x", Tool: "go vet"}},
	}
	review := CheckResult{Name: "review", Kind: KindOther, Mode: Advisory, ExitCode: 3, Output: "style is inconsistent\n"}
	info := CheckResult{Name: "stats", Kind: KindOther, Mode: Informational, ExitCode: 1, Output: "INFO-ONLY-OUTPUT\n"}
	return combine([]CheckResult{tests, lint, review, info})
}

func TestFeedbackOrderAndContent(t *testing.T) {
	t.Parallel()
	fb := sampleVerification().RenderFeedback(0)
	want := []string{
		"Verification failed: tests FAILED, lint FAILED.",
		"- tests: 2 failed (TestParse, TestEmpty)",
		"- lint: 1 problem (parse.go:7:2: unused variable x)",
		"- review: exit status 3: style is inconsistent",
		"--- TestParse (example.com/m)",
		"    parse_test.go:12: want 3, got 2",
		"--- TestEmpty (example.com/m)",
		"parse.go:7:2: unused variable x [go vet]",
		"Output of review (exit 3):",
	}
	last := -1
	for _, w := range want {
		i := strings.Index(fb, w)
		require.GreaterOrEqual(t, i, 0, "%q missing from:\n%s", w, fb)
		assert.Greater(t, i, last, "%q out of order in:\n%s", w, fb)
		last = i
	}
	assert.NotContains(t, fb, "INFO-ONLY-OUTPUT")
	assert.NotContains(t, fb, "lots of go test output", "output of a check with named failures is redundant")
}

func TestFeedbackPassed(t *testing.T) {
	t.Parallel()
	v := combine([]CheckResult{{Name: "tests", Kind: KindTest, Mode: Blocking, Passed: true}})
	assert.Equal(t, "All checks passed.\n", v.RenderFeedback(0))
}

func TestFeedbackNeverExceedsLimit(t *testing.T) {
	t.Parallel()
	v := sampleVerification()
	for i := range 300 {
		v.Failures = append(v.Failures, Failure{Package: "p", Test: fmt.Sprintf("TestGen%03d", i), Lines: []string{strings.Repeat("é", 300)}})
	}
	v.Checks[0].Failures = v.Failures
	for _, limit := range []int{1, 2, 10, 50, 100, 300, 1000, 4096, 8192, 1 << 20} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			t.Parallel()
			fb := v.RenderFeedback(limit)
			assert.LessOrEqual(t, len(fb), limit)
			assert.True(t, utf8.ValidString(fb))
			if limit >= 300 {
				assert.Contains(t, fb, "TestParse")
			}
			if limit >= 1<<20 {
				assert.Contains(t, fb, "TestGen299")
			}
		})
	}
}

func TestFeedbackTrimsTenMegabyteLog(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("HEAD-OF-LOG\n")
	for b.Len() < 10<<20 {
		b.WriteString("some build chatter that nobody needs to read in full\n")
	}
	b.WriteString("TAIL-OF-LOG: make: *** [all] Error 2\n")
	r := CheckResult{Name: "build", Kind: KindOther, Mode: Blocking, ExitCode: 2, Output: b.String()}
	withTest := CheckResult{
		Name: "tests", Kind: KindTest, Mode: Blocking, ExitCode: 1, Output: b.String(),
		Failures: []Failure{{Package: "p", Test: "TestHuge", Lines: []string{"huge_test.go:1: boom"}}},
	}
	v := combine([]CheckResult{withTest, r})
	fb := v.RenderFeedback(0)
	assert.LessOrEqual(t, len(fb), DefaultFeedbackBytes)
	assert.Contains(t, fb, "TestHuge")
	assert.Contains(t, fb, "huge_test.go:1: boom")
	assert.Contains(t, fb, "HEAD-OF-LOG")
	assert.Contains(t, fb, "TAIL-OF-LOG: make: *** [all] Error 2")
	assert.Regexp(t, `\[\.\.\. \d+ bytes of output dropped \.\.\.\]`, fb)
}

func TestSummary(t *testing.T) {
	t.Parallel()
	many := make([]Failure, 7)
	for i := range many {
		many[i] = Failure{Test: fmt.Sprintf("T%d", i)}
	}
	tests := []struct {
		name string
		r    CheckResult
		want string
	}{
		{"passed", CheckResult{Name: "c", Passed: true}, "c: passed"},
		{"start error", CheckResult{Name: "c", StartError: "no such file"}, "c: could not start: no such file"},
		{"many failures", CheckResult{Name: "c", Failures: many}, "c: 7 failed (T0, T1, T2, T3, T4 and 2 more)"},
		{"build", CheckResult{Name: "c", Failures: []Failure{{Package: "p", BuildFailed: true}}}, "c: 1 failed (build of p)"},
		{"diagnostics", CheckResult{Name: "c", Diagnostics: []Diagnostic{{File: "a.go", Line: 1, Message: "m"}, {File: "b.go", Line: 2, Message: "n"}}}, "c: 2 problems (a.go:1: m)"},
		{"exit only", CheckResult{Name: "c", ExitCode: 4, Output: "first\nlast words\n\n"}, "c: exit status 4: last words"},
		{"no output", CheckResult{Name: "c", ExitCode: 4}, "c: exit status 4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, tc.r.Summary())
		})
	}
}

// TestFeedbackNamesOnlyTheChecksThatRan: a task without a lint check is
// never told "lint passed", and a task whose only check is a build is not
// told about tests.
func TestFeedbackNamesOnlyTheChecksThatRan(t *testing.T) {
	t.Parallel()
	tests := CheckResult{Name: "tests", Kind: KindTest, Mode: Blocking, ExitCode: 1, Output: "FAIL\n"}
	fb := combine([]CheckResult{tests}).RenderFeedback(0)
	assert.True(t, strings.HasPrefix(fb, "Verification failed: tests FAILED.\n"), fb)
	assert.NotContains(t, fb, "lint")

	build := CheckResult{Name: "build", Kind: KindOther, Mode: Blocking, ExitCode: 2, Output: "undefined: x\n"}
	lint := CheckResult{Name: "lint", Kind: KindLint, Mode: Blocking, Passed: true}
	fb = combine([]CheckResult{build, lint}).RenderFeedback(0)
	assert.True(t, strings.HasPrefix(fb, "Verification failed: build FAILED, lint passed.\n"), fb)
	assert.NotContains(t, fb, "tests")
}
