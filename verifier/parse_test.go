package verifier

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDiagnostics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		line string
		want []Diagnostic
	}{
		{"go vet", "calc.go:7:51: fmt.Sprintf format %s has arg n of wrong type int", []Diagnostic{{"calc.go", 7, 51, "fmt.Sprintf format %s has arg n of wrong type int", "t"}}},
		{"go vet prefix", "vet: ./x.go:3:1: expected 'package', found 'EOF'", []Diagnostic{{"./x.go", 3, 1, "expected 'package', found 'EOF'", "t"}}},
		{"staticcheck", "main.go:10:2: should use fmt.Println (S1038)", []Diagnostic{{"main.go", 10, 2, "should use fmt.Println (S1038)", "t"}}},
		{"golangci-lint", "pkg/a.go:5:9: Error return value is not checked (errcheck)", []Diagnostic{{"pkg/a.go", 5, 9, "Error return value is not checked (errcheck)", "t"}}},
		{"gcc", "hello.c:3:5: error: expected ';' before 'return'", []Diagnostic{{"hello.c", 3, 5, "error: expected ';' before 'return'", "t"}}},
		{"clang", "src/x.cpp:12:1: warning: unused variable 'y' [-Wunused-variable]", []Diagnostic{{"src/x.cpp", 12, 1, "warning: unused variable 'y' [-Wunused-variable]", "t"}}},
		{"eslint unix", "/home/u/app/index.js:1:10: 'x' is defined but never used. [Error/no-unused-vars]", []Diagnostic{{"/home/u/app/index.js", 1, 10, "'x' is defined but never used. [Error/no-unused-vars]", "t"}}},
		{"no column", "setup.py:4: DeprecationWarning: old", []Diagnostic{{"setup.py", 4, 0, "DeprecationWarning: old", "t"}}},
		{"indented", "\t./a/b.go:2:3: msg\r", []Diagnostic{{"./a/b.go", 2, 3, "msg", "t"}}},
		{"duplicates", "a.go:1:1: x\na.go:1:1: x\na.go:1:2: x", []Diagnostic{{"a.go", 1, 1, "x", "t"}, {"a.go", 1, 2, "x", "t"}}},
		{"time of day", "12:30:45: timer fired", nil},
		{"url", "http://example.com:80: refused", nil},
		{"space in path", "a b.go:1:2: x", nil},
		{"line zero", "x.go:0:1: y", nil},
		{"no message", "x.go:1:2:", nil},
		{"no line", "x.go: nothing", nil},
		{"header", "# example.com/veterr", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, ParseDiagnostics("t", tc.line))
		})
	}
}

func TestParseDiagnosticsBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 1; i <= 2*maxDiagnostics; i++ {
		fmt.Fprintf(&b, "a.go:%d:1: %s\n", i, strings.Repeat("x", 2*maxLineBytes))
	}
	ds := ParseDiagnostics("t", b.String())
	require.Len(t, ds, maxDiagnostics)
	assert.Equal(t, maxDiagnostics, ds[len(ds)-1].Line)
	assert.LessOrEqual(t, len(ds[0].Message), maxLineBytes+len("…"))
}

func TestParseGoTestJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		output string
		want   []failureSummary
	}{
		{
			name: "build failure reported before Go 1.24 as plain stderr",
			output: "# example.com/old\n./a.go:3:2: undefined: x\n" +
				`{"Action":"start","Package":"example.com/old"}` + "\n" +
				`{"Action":"output","Package":"example.com/old","Output":"FAIL\texample.com/old [build failed]\n"}` + "\n" +
				`{"Action":"fail","Package":"example.com/old","Elapsed":0}`,
			want: []failureSummary{{"build of example.com/old", "example.com/old", true, "./a.go:3:2: undefined: x"}},
		},
		{
			name: "timeout names the hung test",
			output: `{"Action":"run","Package":"p","Test":"TestSlow"}` + "\n" +
				`{"Action":"output","Package":"p","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}` + "\n" +
				`{"Action":"output","Package":"p","Output":"panic: test timed out after 1s\n"}` + "\n" +
				`{"Action":"output","Package":"p","Output":"\trunning tests:\n"}` + "\n" +
				`{"Action":"output","Package":"p","Output":"FAIL\tp\t1.01s\n"}` + "\n" +
				`{"Action":"fail","Package":"p","Elapsed":1.01}`,
			want: []failureSummary{
				{"TestSlow", "p", false, ""},
				{"package p", "p", false, "panic: test timed out after 1s\n\trunning tests:"},
			},
		},
		{
			name: "pass and skip leave nothing",
			output: `{"Action":"run","Package":"p","Test":"TestA"}` + "\n" +
				`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:3: noise\n"}` + "\n" +
				`{"Action":"pass","Package":"p","Test":"TestA"}` + "\n" +
				`{"Action":"output","Package":"p","Test":"TestB","Output":"    a_test.go:9: skipped\n"}` + "\n" +
				`{"Action":"skip","Package":"p","Test":"TestB"}` + "\n" +
				`{"Action":"pass","Package":"p"}`,
		},
		{
			name: "build failure without package result",
			output: `{"ImportPath":"example.com/v","Action":"build-output","Output":"# example.com/v\n"}` + "\n" +
				`{"ImportPath":"example.com/v","Action":"build-output","Output":"v.go:1:1: expected 'package'\n"}` + "\n" +
				`{"ImportPath":"example.com/v","Action":"build-fail"}`,
			want: []failureSummary{{"build of example.com/v", "example.com/v", true, "v.go:1:1: expected 'package'"}},
		},
		{
			name: "build output without failure is not a failure",
			output: `{"ImportPath":"example.com/w","Action":"build-output","Output":"cgo: warning\n"}` + "\n" +
				`{"Action":"pass","Package":"example.com/w"}`,
		},
		{name: "not json", output: "--- FAIL: TestX (0.00s)\nFAIL\tp\t0.1s\n"},
		{name: "broken json", output: `{"Action":"fail","Package":"p","Test":"TestX"` + "\n{\n}\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, summarize(ParseGoTestJSON(tc.output)))
		})
	}
}

func TestParseGoTestJSONBounds(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, `{"Action":"output","Package":"p","Test":"TestLong","Output":"    line %d %s\n"}`+"\n", i, strings.Repeat("y", 600))
	}
	b.WriteString(`{"Action":"fail","Package":"p","Test":"TestLong"}` + "\n")
	for i := range maxDetailed + 10 {
		fmt.Fprintf(&b, `{"Action":"output","Package":"p","Test":"TestMany%d","Output":"    why\n"}`+"\n", i)
		fmt.Fprintf(&b, `{"Action":"fail","Package":"p","Test":"TestMany%d"}`+"\n", i)
	}
	fs := ParseGoTestJSON(b.String())
	require.Len(t, fs, maxDetailed+11)
	long := fs[0].Lines
	require.Len(t, long, maxHeadLines+1+maxTailLines)
	assert.True(t, strings.HasPrefix(long[0], "line 0 "))
	assert.Equal(t, "… 940 lines omitted …", long[maxHeadLines])
	assert.True(t, strings.HasPrefix(long[len(long)-1], "line 999 "))
	assert.LessOrEqual(t, len(long[0]), maxLineBytes+len("…"))
	assert.Equal(t, []string{"why"}, fs[maxDetailed-1].Lines)
	assert.Nil(t, fs[maxDetailed].Lines, "failures past maxDetailed keep only their names")
	assert.Equal(t, fmt.Sprintf("TestMany%d", maxDetailed+9), fs[len(fs)-1].Test)
}

func TestParseGoTestVerbose(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		output string
		want   []failureSummary
	}{
		{
			name: "without -v",
			output: "--- FAIL: TestTable (0.00s)\n    --- FAIL: TestTable/sum (0.00s)\n        calc_test.go:22: want 2\n" +
				"--- FAIL: TestAdd (0.00s)\n    calc_test.go:8: want 3\nunrelated line\nFAIL\nFAIL\texample.com/m\t0.01s\nFAIL\n",
			want: []failureSummary{
				{"TestTable/sum", "example.com/m", false, "    calc_test.go:22: want 2"},
				{"TestAdd", "example.com/m", false, "calc_test.go:8: want 3"},
			},
		},
		{
			name: "two packages",
			output: "--- FAIL: TestA (0.00s)\n    a_test.go:1: a\nFAIL\texample.com/a\t0.01s\nok  \texample.com/b\t0.01s\n" +
				"--- FAIL: TestC (0.00s)\n    c_test.go:1: c\nFAIL\texample.com/c\t0.01s\n",
			want: []failureSummary{
				{"TestA", "example.com/a", false, "a_test.go:1: a"},
				{"TestC", "example.com/c", false, "c_test.go:1: c"},
			},
		},
		{
			name:   "package failure outside tests",
			output: "panic: init failed\n\ngoroutine 1 [running]:\nFAIL\texample.com/p\t0.01s\n",
			want:   []failureSummary{{"package example.com/p", "example.com/p", false, "panic: init failed\ngoroutine 1 [running]:"}},
		},
		{
			name:   "no summary line",
			output: "=== RUN   TestCut\n    cut_test.go:5: started\n",
			want:   []failureSummary{{"TestCut", "", false, "cut_test.go:5: started"}},
		},
		{name: "all passing", output: "=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \texample.com/a\t0.01s\n"},
		{name: "not go test", output: "hello\nworld\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, summarize(ParseGoTestVerbose(tc.output)))
		})
	}
}

// chunkedAnalysis feeds output to an analyzer in pieces of size chunk.
func chunkedAnalysis(output string, chunk int) ([]Failure, []Diagnostic) {
	a := newOutputAnalyzer("t")
	for p := []byte(output); len(p) > 0; {
		k := min(chunk, len(p))
		_, _ = a.Write(p[:k])
		p = p[k:]
	}
	return a.finish()
}

func TestAnalyzerMatchesWholeParse(t *testing.T) {
	t.Parallel()
	jsonOut := `{"Action":"output","Package":"p","Test":"TestX","Output":"    x_test.go:3: bad\n"}` + "\n" + `{"Action":"fail","Package":"p","Test":"TestX"}` + "\n"
	textOut := "--- FAIL: TestX (0.00s)\n    x_test.go:3: bad\nFAIL\tp\t0.1s\n"
	diagOut := "a.go:1:2: first\nnoise\nb.go:3:4: second"
	for _, chunk := range []int{1, 3, 17, 1 << 20} {
		f, d := chunkedAnalysis(jsonOut, chunk)
		assert.Equal(t, ParseGoTestJSON(jsonOut), f)
		assert.Empty(t, d)
		f, d = chunkedAnalysis(textOut, chunk)
		assert.Equal(t, ParseGoTestVerbose(textOut), f)
		assert.Empty(t, d)
		f, d = chunkedAnalysis(diagOut, chunk)
		assert.Empty(t, f)
		assert.Equal(t, ParseDiagnostics("t", diagOut), d)
	}
}

func checkFailureBounds(t *testing.T, fs []Failure) {
	t.Helper()
	require.LessOrEqual(t, len(fs), maxFailures)
	for _, f := range fs {
		require.LessOrEqual(t, len(f.Lines), maxHeadLines+1+maxTailLines, "failure %q", f.Name())
		require.NotEmpty(t, f.Name())
	}
}

func FuzzParseGoTestJSON(f *testing.F) {
	f.Add(`{"Action":"run","Package":"p","Test":"TestA"}` + "\n" + `{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:3: x\n"}` + "\n" + `{"Action":"fail","Package":"p","Test":"TestA"}`)
	f.Add(`{"ImportPath":"p [p.test]","Action":"build-output","Output":"./a.go:1:1: x\n"}` + "\n" + `{"ImportPath":"p [p.test]","Action":"build-fail"}` + "\n" + `{"Action":"fail","Package":"p","FailedBuild":"p [p.test]"}`)
	f.Add("# p\n./a.go:1:1: x\n" + `{"Action":"output","Package":"p","Output":"FAIL\tp [build failed]\n"}` + "\n" + `{"Action":"fail","Package":"p"}`)
	f.Add(`{"Action":"fail","Test":"T/"}` + "\n" + `{"Action":"fail","Test":"T"}`)
	f.Fuzz(func(t *testing.T, output string) {
		fs := ParseGoTestJSON(output)
		checkFailureBounds(t, fs)
		got, _ := chunkedAnalysis(output, 7)
		if strings.Contains(output, `"Action"`) && len(got) > 0 {
			require.Equal(t, fs, got)
		}
	})
}

func FuzzParseGoTestVerbose(f *testing.F) {
	f.Add("=== RUN   TestA\n    a_test.go:1: x\n--- FAIL: TestA (0.00s)\nFAIL\tp\t0.1s\n")
	f.Add("--- FAIL: TestA (0.00s)\npanic: boom\n\tstack\nFAIL\tp [build failed]\n")
	f.Add("--- FAIL:\nFAIL\t\n=== RUN\n")
	f.Fuzz(func(t *testing.T, output string) {
		checkFailureBounds(t, ParseGoTestVerbose(output))
	})
}

func FuzzParseDiagnostics(f *testing.F) {
	f.Add("calc.go:7:51: fmt.Sprintf format %s has arg n of wrong type int")
	f.Add("vet: ./x.go:3:1: expected 'package'\nsetup.py:4: warn\n12:30:45: time")
	f.Add("a.go:99999999999999999999:1: overflow")
	f.Fuzz(func(t *testing.T, output string) {
		ds := ParseDiagnostics("tool", output)
		require.LessOrEqual(t, len(ds), maxDiagnostics)
		for _, d := range ds {
			require.Positive(t, d.Line)
			require.GreaterOrEqual(t, d.Col, 0)
			require.NotContains(t, d.File, " ")
			require.NotEmpty(t, d.Message)
			if len(d.Message) <= maxLineBytes {
				// A diagnostic's String form parses back to itself.
				require.Equal(t, []Diagnostic{d}, ParseDiagnostics("tool", d.String()))
			}
		}
	})
}

func TestDropStdFrames(t *testing.T) {
	t.Parallel()
	in := []string{
		"panic: boom [recovered]",
		"goroutine 6 [running]:",
		"testing.tRunner.func1.2({0x55a820, 0x6cac60})",
		"\t/usr/local/go/src/testing/testing.go:1974 +0x232",
		"panic({0x55a820?, 0x6cac60?})",
		"\t/usr/local/go/src/runtime/panic.go:860 +0x13a",
		"example.com/failtest.TestPanic(0x150e445c6248?)",
		"\t/work/failtest/calc_test.go:30 +0x28",
		"example.com/src/testing.helper()",
		"\t/home/u/src/testing/helper.go:3 +0x1",
		"created by testing.(*T).Run in goroutine 1",
		"\t/usr/local/go/src/testing/testing.go:2101 +0x4c5",
	}
	assert.Equal(t, []string{
		"panic: boom [recovered]",
		"goroutine 6 [running]:",
		"example.com/failtest.TestPanic(0x150e445c6248?)",
		"\t/work/failtest/calc_test.go:30 +0x28",
		"example.com/src/testing.helper()",
		"\t/home/u/src/testing/helper.go:3 +0x1",
	}, dropStdFrames(in))
}

func TestParseGoTestVerboseLinesAfterPassAreNotATest(t *testing.T) {
	t.Parallel()
	out := "=== RUN   TestA\n--- PASS: TestA (0.00s)\nleftover from TestMain\nFAIL\texample.com/p\t0.01s\n"
	assert.Equal(t, []failureSummary{{"package example.com/p", "example.com/p", false, "leftover from TestMain"}}, summarize(ParseGoTestVerbose(out)))
}
