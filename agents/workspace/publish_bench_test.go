package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/statgraph/statgraph/internal/proc"
)

// BenchmarkFinish times the publish of one attempt (one changed file: a
// commit, a tree and a blob) into a source with 0 or 10,000 other loose
// branches, in-process (Finish) and, as the floor it replaces, with the
// git fetch the earlier Finish ran (plus its git rev-list check), both
// interleaved in one run. The commit is made outside the timer.
//
//	go test -run XXX -bench Finish -benchtime 200x ./agents/workspace
func BenchmarkFinish(b *testing.B) {
	runs := 0
	for _, branches := range []int{0, 10000} {
		src := newSource(b)
		head := gitRun(b, src, "rev-parse", "HEAD")
		heads := filepath.Join(src, ".git", "refs", "heads", "user")
		if err := os.MkdirAll(heads, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range branches {
			if err := os.WriteFile(filepath.Join(heads, fmt.Sprintf("b%05d", i)), []byte(head+"\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		for _, how := range []string{"inprocess", "gitfetch"} {
			b.Run(fmt.Sprintf("branches=%d/%s", branches, how), func(b *testing.B) {
				runs++
				w := prepare(b, Options{Source: src, TaskID: fmt.Sprintf("%s-%d", how, runs), Root: b.TempDir()})
				ctx := context.Background()
				n := 0
				for b.Loop() {
					b.StopTimer()
					n++
					if err := w.FS().WriteFile("a.txt", fmt.Sprintf("attempt %d\n", n)); err != nil {
						b.Fatal(err)
					}
					if _, _, err := w.Commit(ctx, n, "bench"); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if how == "inprocess" {
						if err := w.Finish(ctx); err != nil {
							b.Fatal(err)
						}
						continue
					}
					ref := w.branch.String()
					if _, err := proc.RunGit(ctx, proc.Git{Dir: src}, "-c", "core.fsync=committed", "-c", "fetch.unpackLimit=1", "-c", "core.hooksPath=/dev/null",
						"fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-gc", w.dir, ref+":"+ref); err != nil {
						b.Fatal(err)
					}
					tip, _ := w.repo.Head()
					if _, err := proc.RunGit(ctx, proc.Git{Dir: src}, "rev-list", "--objects", "--quiet", tip.Hash().String(), "--not", w.base.String()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkFinishSeries publishes n attempts of one task in a row into a
// fresh source (each one changed file, committed outside the timer) and
// reports the mean time of a publish over the whole series and over its
// last tenth, and the packs the source has at the end: every publish adds a
// pack, so without merging them the later publishes pay for all the earlier
// ones (go-git loads every pack index when it opens the source).
//
//	go test -run XXX -bench FinishSeries -benchtime 1x ./agents/workspace
func BenchmarkFinishSeries(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("publishes=%d", n), func(b *testing.B) {
			ctx := context.Background()
			var all, last time.Duration
			packs := 0
			for b.Loop() {
				b.StopTimer()
				src := newSource(b)
				w := prepare(b, Options{Source: src, TaskID: "series", Root: b.TempDir()})
				all, last = 0, 0
				for i := range n {
					if err := w.FS().WriteFile("a.txt", fmt.Sprintf("attempt %d\n", i)); err != nil {
						b.Fatal(err)
					}
					if _, _, err := w.Commit(ctx, i+1, "bench"); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					start := time.Now()
					if err := w.Finish(ctx); err != nil {
						b.Fatal(err)
					}
					d := time.Since(start)
					b.StopTimer()
					all += d
					if i >= n-n/10 {
						last += d
					}
				}
				packs = len(packNames(b, src))
				b.StartTimer()
			}
			b.ReportMetric(float64(all)/float64(time.Millisecond)/float64(n), "ms/publish")
			b.ReportMetric(float64(last)/float64(time.Millisecond)/float64(n/10), "last-tenth-ms/publish")
			b.ReportMetric(float64(packs), "packs-left")
		})
	}
}
