package tests

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// BenchmarkParkResume measures the time from a usage limit's reset to the
// parked task's next model call, on the built binary: each iteration runs
// a one-task plan whose first model request gets a 429 with
// x-ratelimit-reset-requests: 1s (parked, since --park-after is lower),
// and times the next request of the task against the reset (the 429's
// sending plus 1 s, so the figure includes the reply's trip to the
// client). It reports the median in ms/resume (issue 24's figure: run it
// with -benchtime 5x for the median of 5).
func BenchmarkParkResume(b *testing.B) {
	const reset = time.Second
	one := `{"tasks": [{"id": 2, "title": "Task two", "test_cmd": "grep -q ok out.txt"}]}` + "\n"
	var lags []time.Duration
	for b.Loop() {
		m := newLimitModel(b, llmtest.Error(http.StatusTooManyRequests, "Rate limit reached for requests", "rate_limit_exceeded").WithHeader("x-ratelimit-reset-requests", "1s"))
		dir := newRepo(b, map[string]string{"tasks.json": one})
		r := statgraphEnv(b, dir, m.env(), "run", "--model", "scripted", "--park-after", "100ms", "tasks.json")
		require.Equal(b, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		limited, next := m.twoTimes(b)
		lags = append(lags, next.Sub(limited.Add(reset)))
	}
	slices.Sort(lags)
	b.ReportMetric(float64(lags[len(lags)/2].Microseconds())/1000, "ms/resume")
	b.ReportMetric(float64(lags[len(lags)-1].Microseconds())/1000, "ms/resume-max")
}
