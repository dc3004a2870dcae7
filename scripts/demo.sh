#!/usr/bin/env bash
# Runs the quickstart on a fresh copy: examples/quickstart becomes a git
# repository in a temporary directory and `statgraph run` works through its
# tasks.json with the stand-in agent. Exit 0 when statgraph ended as the
# quickstart expects (exit 1: one task failed, one blocked).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${STATGRAPH_BIN:-$root/bin/statgraph}
dir=$(mktemp -d "${TMPDIR:-/tmp}/statgraph-demo.XXXXXX")
cp -R "$root/examples/quickstart/." "$dir/"
cd "$dir"
git init -q -b main
git add -A
git -c user.name=statgraph-demo -c user.email=demo@statgraph.invalid commit -qm "quickstart: initial commit"
echo "== statgraph run tasks.json   (in $dir)"
set +e
"$bin" run -j 2 tasks.json
code=$?
set -e
echo
echo "== exit code $code (1 = some task failed or is blocked, as expected here)"
echo "== tasks.json now records status, retry_count, error_history and failed_at:"
grep -E '"(id|status|retry_count|failed_at)"' tasks.json | sed 's/^ */  /'
echo "== result branches in $dir:"
git branch --list 'statgraph/*' | sed 's/^/  /'
echo "== try: cd $dir && $bin history 1"
[ "$code" -eq 0 ] || [ "$code" -eq 1 ]
