package llmtest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

func TestSleepRecorder(t *testing.T) {
	var s llmtest.SleepRecorder
	assert.Nil(t, s.Waits(), "the zero SleepRecorder has recorded nothing")

	start := time.Now()
	require.NoError(t, s.Sleep(t.Context(), time.Hour))
	assert.Less(t, time.Since(start), time.Minute, "Sleep returns at once")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, s.Sleep(ctx, 2*time.Second), context.Canceled, "a done context's error comes back")
	assert.Equal(t, []time.Duration{time.Hour, 2 * time.Second}, s.Waits())

	waits := s.Waits()
	waits[0] = 0
	assert.Equal(t, time.Hour, s.Waits()[0], "Waits returns a copy")

	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { _ = s.Sleep(t.Context(), time.Millisecond) })
	}
	wg.Wait()
	assert.Len(t, s.Waits(), 22)
}
