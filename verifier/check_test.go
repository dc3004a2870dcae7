package verifier

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph/gate"
)

// goEnv makes the go tool work offline on the testdata modules.
var goEnv = []string{"GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}

func goCheck(name string, kind Kind, args ...string) Check {
	return Check{Name: name, Kind: kind, Command: Command{Argv: append([]string{"go"}, args...), Env: goEnv, Timeout: 2 * time.Minute}}
}

func testdataDir(t *testing.T, module string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", module))
	require.NoError(t, err)
	return dir
}

// failureSummary is what a test compares: name, package, build flag and the
// explaining lines joined.
type failureSummary struct {
	Name, Package string
	Build         bool
	Lines         string
}

func summarize(fs []Failure) []failureSummary {
	var out []failureSummary
	for _, f := range fs {
		out = append(out, failureSummary{f.Name(), f.Package, f.BuildFailed, strings.Join(f.Lines, "\n")})
	}
	return out
}

func TestVerifyRealGoModules(t *testing.T) {
	t.Parallel()
	failtestWant := []struct{ name, line string }{
		{"TestAdd", "calc_test.go:8: Add(1, 2) = -1; want 3"},
		{"TestTable/sum", "calc_test.go:22: Add(1, 1) = 0; want 2"},
		{"TestPanic", "panic: assignment to entry in nil map"},
	}
	tests := []struct {
		name       string
		module     string
		check      Check
		wantTests  bool
		wantLint   bool
		wantErrors []string
		wantFail   []struct{ name, line string }
		wantBuild  string // a compiler error expected in a build failure
		wantDiags  []Diagnostic
	}{
		{name: "passing json", module: "pass", check: goCheck("tests", KindTest, "test", "-json", "./..."), wantTests: true, wantLint: true},
		{name: "passing vet", module: "pass", check: goCheck("lint", KindLint, "vet", "./..."), wantTests: true, wantLint: true},
		{
			name: "failing json", module: "failtest", check: goCheck("tests", KindTest, "test", "-json", "./..."),
			wantLint: true, wantErrors: []string{"tests: 3 failed (TestAdd, TestTable/sum, TestPanic)"}, wantFail: failtestWant,
		},
		{
			name: "failing plain", module: "failtest", check: goCheck("tests", KindTest, "test", "./..."),
			wantLint: true, wantErrors: []string{"tests: 3 failed (TestAdd, TestTable/sum, TestPanic)"}, wantFail: failtestWant,
		},
		{
			name: "failing verbose", module: "failtest", check: goCheck("tests", KindTest, "test", "-v", "./..."),
			wantLint: true, wantErrors: []string{"tests: 3 failed (TestAdd, TestTable/sum, TestPanic)"}, wantFail: failtestWant,
		},
		{
			name: "build error json", module: "builderr", check: goCheck("tests", KindTest, "test", "-json", "./..."),
			wantLint: true, wantErrors: []string{"tests: 1 failed (build of example.com/builderr)"}, wantBuild: "./calc.go:5:37: undefined: c",
		},
		{
			name: "build error plain", module: "builderr", check: goCheck("tests", KindTest, "test", "./..."),
			wantLint: true, wantErrors: []string{"tests: 1 failed (build of example.com/builderr)"}, wantBuild: "./calc.go:5:37: undefined: c",
		},
		{
			name: "vet error", module: "veterr", check: goCheck("lint", KindLint, "vet", "./..."), wantTests: true,
			wantErrors: []string{"lint: 1 problem (calc.go:7:51: fmt.Sprintf format %s has arg n of wrong type int)"},
			wantDiags:  []Diagnostic{{File: "calc.go", Line: 7, Col: 51, Message: "fmt.Sprintf format %s has arg n of wrong type int", Tool: "go vet"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := Verify(context.Background(), testdataDir(t, tc.module), []Check{tc.check})
			require.NoError(t, err)
			require.Len(t, v.Checks, 1)
			r := v.Checks[0]
			assert.Equal(t, tc.wantTests, v.TestsPassed, "TestsPassed; output:\n%s", r.Output)
			assert.Equal(t, tc.wantLint, v.LintPassed, "LintPassed")
			assert.Equal(t, tc.wantErrors, v.Errors)
			assert.Equal(t, tc.wantDiags, r.Diagnostics)
			assert.Equal(t, v.Passed(), r.Passed)

			switch {
			case tc.wantBuild != "":
				require.Len(t, v.Failures, 1, "%+v", v.Failures)
				f := v.Failures[0]
				assert.True(t, f.BuildFailed)
				assert.Equal(t, "example.com/"+tc.module, f.Package)
				assert.Contains(t, f.Lines, tc.wantBuild)
			default:
				require.Len(t, v.Failures, len(tc.wantFail), "%+v", summarize(v.Failures))
				for i, want := range tc.wantFail {
					f := v.Failures[i]
					assert.Equal(t, want.name, f.Test)
					assert.Equal(t, "example.com/"+tc.module, f.Package)
					assert.Contains(t, strings.Join(f.Lines, "\n"), want.line)
					for _, l := range f.Lines {
						assert.False(t, isBookkeeping(l), "bookkeeping line %q kept", l)
					}
				}
			}
		})
	}
}

func TestVerifyRunsChecksConcurrently(t *testing.T) {
	t.Parallel()
	checks := []Check{
		{Name: "a", Kind: KindTest, Command: Command{Argv: []string{"sleep", "0.5"}}},
		{Name: "b", Kind: KindLint, Command: Command{Argv: []string{"sleep", "0.5"}}},
	}
	start := time.Now()
	v, err := Verify(context.Background(), t.TempDir(), checks)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 900*time.Millisecond)
	assert.True(t, v.Passed())
	for _, r := range v.Checks {
		assert.GreaterOrEqual(t, r.Duration, 500*time.Millisecond)
	}
}

// TestCombineEnforcesAsGates: a failed check's result is weighed as a gate
// weighs a verdict of its mode (a check counting as critical), the zero
// Mode included (as in a CheckResult made by hand): blocking fails the
// verification, advisory warns, informational is only recorded.
func TestCombineEnforcesAsGates(t *testing.T) {
	for _, m := range []Mode{"", Blocking, Advisory, Informational} {
		v := combine([]CheckResult{{Name: "c", Kind: KindTest, Mode: m, ExitCode: 1}})
		want := m.For(gate.Critical)
		assert.Equal(t, want != Blocking, v.TestsPassed, "mode %q", m)
		assert.Equal(t, want == Blocking, len(v.Errors) == 1, "mode %q", m)
		assert.Equal(t, want == Advisory, len(v.Warnings) == 1, "mode %q", m)
	}
}

func TestVerifyModes(t *testing.T) {
	t.Parallel()
	fail := Command{Shell: "echo broken; exit 2"}
	tests := []struct {
		name         string
		checks       []Check
		wantTests    bool
		wantLint     bool
		wantErrors   []string
		wantWarnings []string
	}{
		{"no checks", nil, true, true, nil, nil},
		{"blocking test", []Check{{Name: "t", Kind: KindTest, Command: fail}}, false, true, []string{"t: exit status 2: broken"}, nil},
		{"zero kind and mode", []Check{{Name: "o", Command: fail}}, false, true, []string{"o: exit status 2: broken"}, nil},
		{"blocking lint", []Check{{Name: "l", Kind: KindLint, Command: fail}}, true, false, []string{"l: exit status 2: broken"}, nil},
		{"advisory", []Check{{Name: "a", Kind: KindLint, Mode: Advisory, Command: fail}}, true, true, nil, []string{"a: exit status 2: broken"}},
		{"informational", []Check{{Name: "i", Kind: KindTest, Mode: Informational, Command: fail}}, true, true, nil, nil},
		{
			"exit 0 with failing test event",
			[]Check{{Name: "t", Kind: KindTest, Command: Command{Shell: `echo '{"Action":"fail","Package":"p","Test":"TestSneaky"}'`}}},
			false, true, []string{"t: 1 failed (TestSneaky)"}, nil,
		},
		{
			"timeout",
			[]Check{{Name: "slow", Kind: KindTest, Command: Command{Argv: []string{"sleep", "10"}, Timeout: 100 * time.Millisecond, Grace: 100 * time.Millisecond}}},
			false, true, []string{"slow: timed out after 100ms"}, nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := Verify(context.Background(), t.TempDir(), tc.checks)
			require.NoError(t, err)
			assert.Equal(t, tc.wantTests, v.TestsPassed)
			assert.Equal(t, tc.wantLint, v.LintPassed)
			if tc.name == "timeout" {
				// The duration varies with load; check its shape.
				require.Len(t, v.Errors, 1)
				assert.Regexp(t, `^slow: timed out after \d+(\.\d+)?(ms|s)$`, v.Errors[0])
				v.Errors = tc.wantErrors
			}
			assert.Equal(t, tc.wantErrors, v.Errors)
			assert.Equal(t, tc.wantWarnings, v.Warnings)
			assert.Len(t, v.Checks, len(tc.checks))
		})
	}
}

func TestVerifyErrors(t *testing.T) {
	t.Parallel()
	t.Run("invalid kind and mode run nothing", func(t *testing.T) {
		t.Parallel()
		marker := filepath.Join(t.TempDir(), "ran")
		_, err := Verify(context.Background(), t.TempDir(), []Check{
			{Name: "x", Kind: "unit", Command: Command{Argv: []string{"touch", marker}}},
			{Name: "y", Mode: "strict", Command: Command{Argv: []string{"touch", marker}}},
		})
		require.ErrorIs(t, err, ErrInvalidCheck)
		assert.Contains(t, err.Error(), `check 1 (x): verifier: invalid check: kind "unit"`)
		assert.Contains(t, err.Error(), `check 2 (y): verifier: invalid check: mode "strict"`)
		assert.NoFileExists(t, marker)
	})
	t.Run("missing program", func(t *testing.T) {
		t.Parallel()
		v, err := Verify(context.Background(), t.TempDir(), []Check{
			{Name: "lint", Kind: KindLint, Command: Command{Argv: []string{"no-such-linter-statgraph"}}},
			{Name: "tests", Kind: KindTest, Command: Command{Argv: []string{"true"}}},
		})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `check "lint"`)
		assert.Contains(t, err.Error(), "no-such-linter-statgraph")
		assert.False(t, v.LintPassed)
		assert.True(t, v.TestsPassed)
		assert.Contains(t, v.Checks[0].StartError, "executable file not found")
		assert.True(t, v.Checks[1].Passed)
	})
	t.Run("canceled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		v, err := Verify(ctx, t.TempDir(), []Check{{Name: "t", Command: Command{Argv: []string{"sleep", "10"}, Grace: 100 * time.Millisecond}}})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.True(t, v.Checks[0].Canceled)
		assert.False(t, v.TestsPassed)
	})
	t.Run("relative dir", func(t *testing.T) {
		t.Parallel()
		work := t.TempDir()
		v, err := Verify(context.Background(), work, []Check{{Command: Command{Argv: []string{"pwd"}, Dir: "."}}})
		require.NoError(t, err)
		resolved, err := filepath.EvalSymlinks(work)
		require.NoError(t, err)
		assert.Equal(t, resolved, strings.TrimSpace(v.Checks[0].Output))
		assert.Equal(t, "pwd", v.Checks[0].Name)
	})
}

func TestVerifyFindsFailureInMiddleOfHugeLog(t *testing.T) {
	t.Parallel()
	script := `yes noise-line | head -c 5000000
echo
printf -- '--- FAIL: TestMiddle (0.00s)\n    mid_test.go:3: boom in the middle\n'
yes more-noise | head -c 5000000
echo
printf 'FAIL\texample.com/mid\t0.1s\n'
exit 1`
	v, err := Verify(context.Background(), t.TempDir(), []Check{{Name: "tests", Kind: KindTest, Command: Command{Shell: script}}})
	require.NoError(t, err)
	r := v.Checks[0]
	assert.Positive(t, r.Dropped)
	assert.NotContains(t, r.Output, "TestMiddle", "the capture should have dropped the middle")
	require.Equal(t, []failureSummary{{"TestMiddle", "example.com/mid", false, "mid_test.go:3: boom in the middle"}}, summarize(v.Failures))

	fb := v.RenderFeedback(0)
	assert.LessOrEqual(t, len(fb), DefaultFeedbackBytes)
	assert.Contains(t, fb, "TestMiddle")
	assert.Contains(t, fb, "boom in the middle")
}
