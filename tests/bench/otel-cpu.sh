#!/bin/bash
# CPU seconds (user+sys, from rusage via /usr/bin/time) per W1 node execution,
# each measurement its own process, rounds interleaved so that load hits all alike.
# A/B: BenchmarkW1 of the base commit (df24429) and of h/otel.
# Tracing: the five cases of BenchmarkW1Tracing.
N=${N:-6}
cpu() { # binary bench benchtime
  /usr/bin/time -f "%U %S" "$1" -test.run '^$' -test.bench "$2" -test.benchtime "$3" -test.benchmem 2>&1 >/tmp/otel-cpu.last | tail -1 | awk '{print $1+$2}'
}
for i in $(seq $N); do
  for v in base new; do
    c=$(cpu /tmp/w1-$v.test '^BenchmarkW1$' 2000x)
    a=$(grep -o '[0-9]* allocs/op' /tmp/otel-cpu.last)
    echo "ab $v cpu_ns_per_node $(awk -v c=$c 'BEGIN{printf "%.1f", c*1e9/(2001*2002)}') $a"
  done
  for c in plain nop-hook stream adapter-no-sdk adapter-sdk-discard adapter-sdk-memory; do
    k=2000; case $c in adapter-sdk*) k=100;; esac
    t=$(cpu /tmp/otel-bench.test "^BenchmarkW1Tracing/$c\$" ${k}x)
    a=$(grep -o '[0-9]* allocs/op' /tmp/otel-cpu.last)
    echo "tr $c cpu_ns_per_node $(awk -v t=$t -v k=$k 'BEGIN{printf "%.1f", t*1e9/((k+1)*2002)}') $a"
  done
done
