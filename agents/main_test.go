package agents

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: model
// calls, checks and graph runs must all be waited for.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
