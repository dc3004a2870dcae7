package web_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/web"
)

// median returns the median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// benchPlan is n independent tasks run by a quick agent CLI.
func benchPlan(n int) string {
	var b strings.Builder
	b.WriteString(`{"tasks": [`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id": %d, "title": "task %d", "executor": {"command": ["sh", "-c", "echo %d > f%d.txt"]}, "test_cmd": "test -f f%d.txt"}`, i, i, i, i, i)
	}
	b.WriteString("]}\n")
	return b.String()
}

// BenchmarkPageFirstLoad measures the page's first load, from navigation
// until the board shows every task and the graph is drawn, against a
// floor measured in the same run: navigating to a one-line page served by
// the same kind of server. Reported: ms/load, floor-ms/load and the ratio.
//
//	go test -run '^$' -bench PageFirstLoad -benchtime 20x ./web
func BenchmarkPageFirstLoad(b *testing.B) {
	c := newControl(b, benchPlan(50), llm.Config{})
	srv := serveTest(b, web.Handler(c, ""))
	floor := serveTest(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><p id="x">floor</p>`)
	}))
	ctx := browser(b, 10*time.Minute)
	var loads, floors []float64
	for range b.N {
		start := time.Now()
		step(b, ctx, "load the page", chromedp.Navigate(srv.URL), chromedp.WaitVisible(card("1", "pending")))
		step(b, ctx, "see the whole board", until(`document.querySelector('#board .card[data-id="50"]') && document.querySelector('#graph svg #sg-node-__end__')`))
		loads = append(loads, ms(time.Since(start)))
		start = time.Now()
		step(b, ctx, "load the floor page", chromedp.Navigate(floor.URL), until(`document.querySelector('#x')`))
		floors = append(floors, ms(time.Since(start)))
	}
	b.ReportMetric(median(loads), "ms/load")
	b.ReportMetric(median(floors), "floor-ms/load")
	b.ReportMetric(median(loads)/median(floors), "x-floor")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkStatusToPage measures, over a run of 20 tasks started from the
// page, the time from a task's status change (the run's report) to the
// page showing it (the card in its new column), median over every change;
// the floor is the page's own fetch of /api/tasks in the same run.
//
//	go test -run '^$' -bench StatusToPage -benchtime 3x ./web
func BenchmarkStatusToPage(b *testing.B) {
	ctx := browser(b, 10*time.Minute)
	var lat, floors []float64
	for range b.N {
		c := newControl(b, benchPlan(20), llm.Config{})
		srv := serveTest(b, web.Handler(c, ""))
		step(b, ctx, "load the page", chromedp.Navigate(srv.URL),
			until(`document.querySelector('#board .card[data-id="20"]') && document.querySelector('#conn[data-state="live"]')`))
		step(b, ctx, "run the tasks from the page", chromedp.Click(css(`#start`)),
			until(`document.querySelectorAll('#board .card[data-status="done"]').length === 20`))
		if err := c.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`window.sgLatencies`))
		must(b, err)
		lat = append(lat, got...)
		f, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(async () => { const r = []; for (let i = 0; i < 10; i++) { const s = performance.now(); await (await fetch("/api/tasks")).json(); r.push(performance.now() - s); } return r; })()`, chromedp.EvalAwaitPromise))
		must(b, err)
		floors = append(floors, f...)
	}
	b.ReportMetric(median(lat), "ms/change")
	b.ReportMetric(float64(len(lat))/float64(b.N), "changes/run")
	b.ReportMetric(median(floors), "floor-ms/fetch")
	b.ReportMetric(median(lat)/median(floors), "x-floor")
	b.ReportMetric(0, "ns/op")
}

// until waits until the JavaScript expression is truthy in the page,
// checking every 5ms.
func until(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for {
			ok, err := chromedp.Evaluate[bool]("!!("+expr+")")(ctx, t)
			if err != nil || ok {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
}

// step runs actions with a bound of its own, so a page that never gets
// there fails the benchmark instead of hanging it.
func step(b testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	b.Helper()
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		b.Fatalf("%s: %v", what, err)
	}
}

func must(b testing.TB, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
