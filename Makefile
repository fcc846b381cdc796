# scriptlock — build, test and check targets.
GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
TESTFLAGS   ?=

.PHONY: all generate check-generated lint test bench bench-compare redis-server demo

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
	cd otel && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...

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
	cd otel && $(GO) test -race -count=1 $(TESTFLAGS) ./...

## demo: the recharge example, duplicate requests with and without the lock (REDIS_URL, else redis-server, else embedded)
demo:
	$(GO) run ./examples/recharge/cmd/demo

## bench: benchmarks with allocation counts
bench: redis-server
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-compare: scriptlock beside redsync, bsm/redislock and rueidislock, same server, one run
bench-compare: redis-server
	cd bench && $(GO) test -run '^$$' -bench . -benchmem -count 8 | tee bench.txt
	cd bench && $(GO) run golang.org/x/perf/cmd/benchstat@latest bench.txt
