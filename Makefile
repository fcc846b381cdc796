# scriptlock — build, test and check targets.
GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
TESTFLAGS   ?=
BENCH_ROUNDS ?= 8
BENCHTIME    ?= 1s
BENCHSTAT   ?= golang.org/x/perf/cmd/benchstat@latest

.PHONY: all generate check-generated lint test bench bench-compare bench-chart redis-server demo

all: generate lint test

## generate: regenerate generated/ from scripts/*.lua
generate:
	$(GO) generate ./...

## check-generated: fail when generated/ is stale against scripts/
check-generated:
	$(GO) run ./cmd/scriptgen -in scripts -out generated -pkg generated -check

## lint: gofmt, go vet, staticcheck (pinned)
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## redis-server: install redis-server with apt-get when it is missing (root only)
redis-server:
	@if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing redis-server with apt-get"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null) || exit 1; \
	else \
	  echo "redis-server is not installed: run 'sudo apt-get install -y redis-server' (Debian/Ubuntu) or 'brew install redis' (macOS)"; exit 1; \
	fi

## test: all tests against real redis-server processes started by the tests
test: redis-server
	$(GO) test -race -count=1 $(TESTFLAGS) ./...

## demo: the recharge example, duplicate requests with and without the lock (REDIS_URL, else redis-server, else embedded)
demo:
	$(GO) run ./examples/recharge/cmd/demo

## bench: benchmarks with allocation counts
bench: redis-server
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-compare: scriptlock beside redsync, rueidislock, bsm/redislock and bare SET NX PX on one server;
##   BENCH_ROUNDS rounds of every benchmark, library order rotated each round; writes bench/bench.txt,
##   prints benchstat with one column per library (the first, SET NX PX, is the base), draws bench/chart.png;
##   a failed run (a library that errs or hangs past a minute) is reported and the other rounds still run
bench-compare: redis-server
	@cd bench && rm -f bench.txt && r=0 && failed=0 && while [ $$r -lt $(BENCH_ROUNDS) ]; do \
	  echo "round $$((r+1)) of $(BENCH_ROUNDS)"; \
	  $(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count 1 -args -rotate=$$r > round.txt || failed=1; \
	  cat round.txt >> bench.txt; cat round.txt; rm -f round.txt; r=$$((r+1)); done; \
	  $(GO) run $(BENCHSTAT) -col /lib bench.txt && $(GO) run ./cmd/chart -o chart.png bench.txt && \
	  if [ $$failed -ne 0 ]; then echo "bench-compare: some benchmark runs failed, see FAIL above"; exit 1; fi

## bench-chart: draw bench/chart.png from bench/bench.txt (ops/s, acquisitions/s and wait p99 per library)
bench-chart:
	cd bench && $(GO) run ./cmd/chart -o chart.png bench.txt
