# statgraph: build, test and benchmark targets. `make test` is what CI runs.
GO ?= go
PKGS := ./...

.PHONY: build test test-scale fmt-check vet allocs differential race bench bench-peers demo clean sandbox-deps

build:
	$(GO) build -o bin/statgraph ./cmd/statgraph

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)
	$(GO) vet -tags scale ./tests/

# The sandbox statgraph runs checks and agent CLIs in is bubblewrap (bwrap):
# installed here when missing and we are root on a Debian-like machine,
# otherwise the command to run is printed and make stops.
sandbox-deps:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing bubblewrap (the sandbox for checks and agent CLIs)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; \
	  else \
	    echo "statgraph runs checks in a bubblewrap sandbox; install it first: sudo apt-get install bubblewrap"; exit 1; \
	  fi; }

race: sandbox-deps
	$(GO) test -race -count=1 -timeout 15m $(PKGS)

# The allocation guards (tests named *Alloc*, e.g. TestW2AllocationBudget,
# and TestAppendAmortised) skip under -race, whose bookkeeping changes
# allocation figures: this short pass runs them without it.
allocs:
	$(GO) test -count=1 -timeout 5m -run 'Alloc|Amortised' $(PKGS)

# The differential test of the library (statgraph/differential_*_test.go)
# runs its 10,000 generated graphs here, without the race detector, which
# makes it several times slower; the race pass runs 1,000 of them.
differential:
	$(GO) test -count=1 -timeout 10m -run 'TestDifferential$$' ./statgraph/

test: fmt-check vet allocs differential race

# The scale-out end-to-end suite (tests/queue*_test.go, build tag "scale"):
# a coordinator and worker processes on a real PostgreSQL
# (STATGRAPH_TEST_POSTGRES, see DEVELOPERS.md), workers killed with
# kill -9 and stalled past their lease; and a run with a 250 MiB file
# whose peak RSS is measured (tests/largefile_test.go). Minutes long, so apart from `make
# test`; CI (.ci/run) runs both.
test-scale: sandbox-deps
	$(GO) test -race -count=1 -timeout 20m -tags scale -run 'TestQueue|TestRunWithLargeFile' ./tests/

bench:
	$(GO) run ./tests/bench/w1 1000 200
	$(GO) run ./tests/bench/w2 1000
	$(GO) run ./tests/bench/w3 1000 20
	$(GO) run ./tests/bench/w4 1000 21

bench-peers:
	STATGRAPH_ROOT=$(CURDIR) ../shared/bench-anchors/scripts/build.sh
	../shared/bench-anchors/scripts/run.sh -n 5 'statgraph|eino|goplain|langgraphjs'

demo: build sandbox-deps
	scripts/demo.sh

clean:
	rm -rf bin
