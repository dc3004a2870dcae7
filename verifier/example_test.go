package verifier_test

import (
	"context"
	"fmt"
	"time"

	"github.com/statgraph/statgraph/verifier"
)

func ExampleRun() {
	res, err := verifier.Run(context.Background(), verifier.Command{
		Argv:    []string{"sh", "-c", "echo hello; exit 3"},
		Timeout: 10 * time.Second,
	})
	if err != nil {
		fmt.Println("could not start:", err)
		return
	}
	fmt.Printf("exit %d: %s", res.ExitCode, res.Output)
	// Output: exit 3: hello
}

func ExampleVerify() {
	checks := []verifier.Check{
		{Name: "tests", Kind: verifier.KindTest, Command: verifier.Command{
			Shell: `printf -- '--- FAIL: TestParse (0.00s)\n    parse_test.go:12: want 3, got 2\nFAIL\texample.com/m\t0.01s\n'; exit 1`,
		}},
		{Name: "lint", Kind: verifier.KindLint, Command: verifier.Command{Argv: []string{"true"}}},
		{Name: "style", Kind: verifier.KindLint, Mode: verifier.Advisory, Command: verifier.Command{
			Shell: `echo 'main.go:3:1: exported function Run should have comment'; exit 1`,
		}},
	}
	v, err := verifier.Verify(context.Background(), ".", checks)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("tests passed:", v.TestsPassed, "lint passed:", v.LintPassed)
	fmt.Println("errors:", v.Errors)
	fmt.Println("warnings:", v.Warnings)
	fmt.Println(v.Failures[0].Test, v.Failures[0].Lines)
	// Output:
	// tests passed: false lint passed: true
	// errors: [tests: 1 failed (TestParse)]
	// warnings: [style: 1 problem (main.go:3:1: exported function Run should have comment)]
	// TestParse [parse_test.go:12: want 3, got 2]
}

func ExampleVerification_RenderFeedback() {
	v := verifier.Verification{
		TestsPassed: false,
		LintPassed:  true,
		Errors:      []string{"tests: 1 failed (TestParse)"},
		Checks: []verifier.CheckResult{{
			Name: "tests", Kind: verifier.KindTest, Mode: verifier.Blocking, ExitCode: 1,
			Failures: []verifier.Failure{{Package: "example.com/m", Test: "TestParse", Lines: []string{"parse_test.go:12: want 3, got 2"}}},
		}},
	}
	fmt.Print(v.RenderFeedback(200))
	// Output:
	// Verification failed: tests FAILED.
	// - tests: 1 failed (TestParse)
	//
	// Failing tests:
	// --- TestParse (example.com/m)
	//     parse_test.go:12: want 3, got 2
}

func ExampleParseDiagnostics() {
	out := "# example.com/m\ncalc.go:7:51: fmt.Sprintf format %s has arg n of wrong type int\n"
	for _, d := range verifier.ParseDiagnostics("go vet", out) {
		fmt.Printf("%s line %d col %d: %s (%s)\n", d.File, d.Line, d.Col, d.Message, d.Tool)
	}
	// Output: calc.go line 7 col 51: fmt.Sprintf format %s has arg n of wrong type int (go vet)
}
