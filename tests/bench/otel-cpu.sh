#!/bin/bash
# OpenTelemetry overhead on W1, as CPU seconds (user+sys, from rusage via
# /usr/bin/time) per node execution; each measurement is its own process and
# the rounds are interleaved, so that the machine's load hits all cases alike.
#   A/B:     BenchmarkW1 (statgraph/bench_test.go) built at BASE and here.
#   tracing: the cases of BenchmarkW1Tracing (statgraph/otel/bench_test.go).
# Usage, from the module root: N=5 BASE=df24429 tests/bench/otel-cpu.sh
set -e
N=${N:-5}
BASE=${BASE:-df24429}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
git archive "$BASE" | tar -x -C "$bin"
(cd "$bin" && go test -c -o "$bin/w1-base.test" ./statgraph)
go test -c -o "$bin/w1-new.test" ./statgraph
go test -c -o "$bin/otel.test" ./statgraph/otel
cpu() { # binary bench benchtime -> CPU seconds; the output goes to $bin/last
  /usr/bin/time -f "%U %S" "$1" -test.run '^$' -test.bench "$2" -test.benchtime "$3" -test.benchmem 2>&1 >"$bin/last" | tail -1 | awk '{print $1+$2}'
}
for i in $(seq "$N"); do
  for v in base new; do
    c=$(cpu "$bin/w1-$v.test" '^BenchmarkW1$' 2000x)
    echo "ab $v cpu_ns_per_node $(awk -v c="$c" 'BEGIN{printf "%.1f", c*1e9/(2001*2002)}') $(grep -o '[0-9]* allocs/op' "$bin/last")"
  done
  for c in plain nop-hook stream adapter-no-sdk adapter-sdk-discard adapter-sdk-memory; do
    k=2000
    case $c in adapter-sdk*) k=100 ;; esac
    t=$(cpu "$bin/otel.test" "^BenchmarkW1Tracing/$c\$" ${k}x)
    echo "tr $c cpu_ns_per_node $(awk -v t="$t" -v k=$k 'BEGIN{printf "%.1f", t*1e9/((k+1)*2002)}') $(grep -o '[0-9]* allocs/op' "$bin/last")"
  done
done
