# scriptlock — build, test and check targets.
GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
TESTFLAGS   ?=
BENCH_ROUNDS ?= 8
BENCHTIME    ?= 1s
BENCHSTAT   ?= golang.org/x/perf/cmd/benchstat@latest
# BENCH_CPUS=client:server (taskset -c lists, e.g. 0:1) keeps redis-server off the benchmark's
# CPUs, as on separate hosts; empty: they share every CPU. Pinned runs write bench-pinned.txt
# and chart-pinned.png.
BENCH_CPUS   ?=
# BENCH_FLAGS: more flags for the bench binary, e.g. -flush-delay=20us (rueidis MaxFlushDelay).
BENCH_FLAGS  ?=
bench_client  = $(word 1,$(subst :, ,$(BENCH_CPUS)))
bench_server  = $(word 2,$(subst :, ,$(BENCH_CPUS)))
bench_txt     = $(if $(BENCH_CPUS),bench-pinned.txt,bench.txt)
bench_png     = $(if $(BENCH_CPUS),chart-pinned.png,chart.png)

# REDIS_VERSION: run the tests (make test, test-go1.27, chaos) against this Redis release, 7.2.5
# or 7.4.2, built once from source into REDIS_CACHE (make redis-version); empty: the redis-server
# in PATH, Debian's 7.0.15 that make deps installs. gen/ is left out of such runs: its tests hold
# the script checker to Redis 7.0's behaviour, the oldest release supported.
REDIS_VERSION ?=
REDIS_CACHE   ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/scriptlock/redis
ifneq ($(REDIS_VERSION),)
export PATH := $(REDIS_CACHE)/$(REDIS_VERSION)/bin:$(PATH)
endif
# not_gen leaves gen/ out of a package list when REDIS_VERSION is set.
not_gen = $(if $(REDIS_VERSION),| grep -vx '$(shell $(GO) list -m)/gen')

.PHONY: all help generate check-generated lint test prebuild test-go1.27 build-go1.27 bench bench-compare bench-chart deps redis-server redis-version demo demo-postgres chaos

all: generate lint test

## help: list these targets and what they do
help:
	@sed -n 's/^## \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

## generate: regenerate generated/ from scripts/*.lua, and middleware/echolock/v5 from middleware/echolock
generate:
	$(GO) generate ./...

## check-generated: fail when generated/ is stale against scripts/, the Echo v5 middleware
##   (middleware/echolock/v5) against the Echo v4 one it is generated from, or scriptgen's
##   command table against the Redis command specifications in ../shared
check-generated:
	$(GO) run ./cmd/scriptgen -in scripts -out generated -pkg generated -check -strict
	$(GO) run ./middleware/internal/echov5gen -in middleware/echolock -out middleware/echolock/v5 -check
	@if [ -d ../shared/redis-commands/json ] || [ -n "$$CI" ]; then \
	  $(GO) run ./gen/internal/cmdtable -in ../shared/redis-commands/json -out gen/commands_table.go -check; \
	else \
	  echo "check-generated: ../shared/redis-commands/json is not beside this checkout; command table not checked"; \
	fi

## lint: gofmt, go vet, staticcheck (pinned)
# go vet and staticcheck type-check against compiled packages: with -race they read those make
# test and make prebuild leave in the build cache, where without it every dependency (gRPC,
# SQLite, the standard library) is compiled again for the checks alone. staticcheck is built
# as usual and run with -race added to GOFLAGS, which the go list it runs reads. The race
# build tag only drops the one-line !race files (a constant each) from what they read.
STATICCHECK_RACE = $(GO) run -exec 'env "GOFLAGS=$(strip $(GOFLAGS) -race)"' $(STATICCHECK)
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet -race ./...
	$(STATICCHECK_RACE) ./...
	cd otel && $(GO) vet -race ./... && $(STATICCHECK_RACE) ./...
	cd bench && $(GO) vet -race ./... && $(STATICCHECK_RACE) ./...

## deps: install redis-server, redis-sentinel and PostgreSQL with apt-get when missing (root only)
# Each check is on the binary the tests run; the install command is printed
# when it cannot run here.
PG_BINDIR = $(firstword $(shell ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r))
deps: $(if $(REDIS_VERSION),redis-version)
	@missing=""; \
	command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v redis-sentinel >/dev/null 2>&1 || missing="$$missing redis-sentinel"; \
	{ command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1; } || [ -x "$(PG_BINDIR)/initdb" ] || missing="$$missing postgresql"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing$$missing with apt-get"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) || \
	    { echo "apt-get install failed: run 'sudo apt-get install -y$$missing'"; exit 1; }; \
	else \
	  echo "missing:$$missing. Run 'sudo apt-get install -y$$missing' (Debian/Ubuntu) or 'brew install redis postgresql' (macOS)"; exit 1; \
	fi

# redis-server: kept for the targets and habits that name it.
redis-server: deps

## redis-version: build Redis REDIS_VERSION (7.2.5 or 7.4.2) from its source, fetched through the
##   Go module proxy, into REDIS_CACHE (once; needs gcc, make and libssl-dev, installed when missing)
redis-version:
	@if [ -z "$(REDIS_VERSION)" ]; then echo "redis-version: set REDIS_VERSION (7.2.5 or 7.4.2)"; exit 2; fi
	bash internal/redistest/build-redis.sh $(REDIS_VERSION) "$(REDIS_CACHE)/$(REDIS_VERSION)"

# CPUS: the machine's CPUs, which TEST_PARALLEL and TEST_PKGS scale with.
CPUS := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)

# TEST_PARALLEL: how many tests marked parallel run at once. Most of them wait on timers and
# Redis, not the CPU, so four times the CPUs and at least 16 (go test's default is GOMAXPROCS).
TEST_PARALLEL ?= $(shell n=$$(($(CPUS) * 4)); [ "$$n" -ge 16 ] 2>/dev/null || n=16; echo $$n)

# TEST_PKGS: how many of the other packages' test binaries run at once after the root package's
# (go test -p, whose default is the number of CPUs). They too mostly wait on timers and Redis:
# on 2 cores, 4 at once took them from 3 min 4 s to 2 min 2 s, with about the same CPU time.
TEST_PKGS ?= $(shell echo $$(($(CPUS) * 2)))

# TEST_TIMEOUT: go test's limit per package. The root package has taken up to 7 minutes under
# the race detector on 2 cores, running fewer tests at once: too close to go test's default of
# 10 for a slower machine to fail on that alone, while a test that hangs still ends the run.
TEST_TIMEOUT ?= 20m

# COMPILE: a go command (behind BUILD_LOCK) that compiles packages, their tests and every
# dependency into the build cache and runs nothing, so that the tests then run with what they need
# already compiled. go test builds one package while it runs another's tests: on a machine whose
# build cache is empty (a fresh CI machine) the compiler then takes the CPUs from the tests, whose
# time bounds (a renewal confirmed within a lease, a waiter woken within a second) are part of what
# they check. go list -export compiles each package as go test does and links nothing: go test
# links every test binary it runs, so building them with go test first (-run '^$$' -exec true)
# linked each twice, 40 s of CPU time for ./... under the race detector.
COMPILE = $(BUILD_LOCK) $(GO) list -export -test -deps

# BUILD_LOCK: a command put before each step that only compiles (`flock <file>`, as .ci/run sets
# it; empty: none). Two go commands compiling the same packages at once each compile all of
# them, the build cache sharing only what is finished: with the lock, steps run side by side
# (.ci/run's prebuild beside make test) take turns at compiling, and the second finds the
# first's work in the cache.
BUILD_LOCK ?=

# The root package (the locks: hundreds of tests whose time bounds are part of what they check)
# runs on its own, then the other packages side by side: run beside them (the generator's
# thousands of scripts on redis-server, the Cluster and Sentinel suites), its timers fired
# late on 2 cores. Both runs are made, and either failing fails the target.
ROOT_PKG = $(shell $(GO) list .)

## test: all tests against real redis-server processes started by the tests; with REDIS_VERSION=7.2.5
##   or 7.4.2, against that Redis release, built from source (gen/, whose tests hold its checker to 7.0, left out)
test: deps
	$(COMPILE) -race . >/dev/null
	@rc=0; \
	echo "$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -parallel $(TEST_PARALLEL) $(TESTFLAGS) ."; \
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -parallel $(TEST_PARALLEL) $(TESTFLAGS) . || rc=1; \
	$(COMPILE) -race ./... >/dev/null || rc=1; \
	echo "$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -parallel $(TEST_PARALLEL) -p $(TEST_PKGS) $(TESTFLAGS) <every other package>"; \
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -parallel $(TEST_PARALLEL) -p $(TEST_PKGS) $(TESTFLAGS) $$($(GO) list ./... | grep -vxF '$(ROOT_PKG)' $(not_gen)) || rc=1; \
	exit $$rc
	$(COMPILE) . >/dev/null
	$(GO) test -count=1 -run '^(TestUncontendedAllocs|TestSemaphoreConnectionDrops|TestLatchConnectionDrops|TestTrySetConnectionDrops)$$' .
	cd otel && $(COMPILE) -race ./... >/dev/null && $(GO) test -race -count=1 $(TESTFLAGS) ./...
	cd bench && $(COMPILE) -race ./... >/dev/null && $(GO) test -race -count=1 $(TESTFLAGS) ./...

## prebuild: compile, without running anything, the tests make test compiles after its root
##   package's tests (every other package with the race detector, the allocation tests without it),
##   make chaos's and make test-go1.27's. .ci/run runs it at idle CPU priority beside make test, whose
##   root package's tests mostly wait on timers and Redis: the later steps find them built
prebuild:
	$(COMPILE) -race ./... >/dev/null
	cd otel && $(COMPILE) -race ./... >/dev/null
	cd bench && $(COMPILE) -race ./... >/dev/null
	$(COMPILE) . ./internal/chaos >/dev/null
	$(MAKE) --no-print-directory build-go1.27

## test-go1.27: the tests again, built with Go 1.27 (GO127, default go1.27.4; the go command
##   downloads that toolchain once through GOTOOLCHAIN). go.mod's go line, 1.26, is the oldest
##   release supported and what `make test` uses. This run is without the race detector
##   (GO127_RACE=-race adds it): the races it finds are the code's, which make test looks for,
##   and a cold cache's instrumented build of the standard library and every dependency under a
##   second toolchain is a large part of CI's time. To keep CI short, this run leaves out what
##   exercises Redis, rueidis or the example application rather than the Go release: the random
##   process faults, the Cluster resharding, outage, failover, loading and busy-script tests and the
##   waits through broken pub/sub, a frozen server and ended waits (pub/sub and timers, not the release),
##   a frozen Cluster node beside healthy ones (rueidis's Cluster routing), calls held up on a
##   stalled link and attempts landing after their undo (a proxy's timing and rueidis's connections),
##   connections dropped under the semaphores and latches (make test runs them twice already),
##   the fencing counter's expiry (Redis's key expiry), a server refusing writes after a failed save,
##   renewals beside an owner's re-entries without pause (timers), the failover guard's tests (replication,
##   WAIT and rueidis's connections), a Redis restart and a release the server
##   never answers, a lock held through a slot migration or a Cluster failover, the CLI's listing of a
##   Cluster with a primary down or failed over (Cluster processes), what stays behind after many names,
##   connections and fault paths (Redis's keys and the Client's maps, run by make test), gen's
##   *AgreesWithServer and *AgreeWithServer tests (thousands of scripts and commands run on redis-server to hold the
##   checker's model to what Redis does; gen's checker, golden and generation tests still run)
##   (GO127_SKIP= runs them too), the Sentinel failover suite internal/failover (a minute of
##   waiting for failovers), the process-level chaos suite internal/chaos (Redis and worker processes
##   paused, killed and restarted; `make chaos` runs it), the test harness's own tests
##   internal/redistest (Sentinel and Cluster failovers, replication, restarts: Redis's doing; the
##   harness itself runs under every other package's tests), examples/ (with its SQLite and gRPC
##   dependencies it takes over two minutes to build with -race on a cold cache) and the Echo v5
##   middleware (generated from the Echo v4 one, which runs; its build under a second toolchain
##   is most of its cost) (GO127_PKGS=./... runs all five too).
GO127      ?= go1.27.4
GO127_RACE ?=
# GO127_PARALLEL: as TEST_PARALLEL.
GO127_PARALLEL ?= $(TEST_PARALLEL)
GO127_SKIP ?= ^(TestRandomFaults|TestLeaseProbe|TestUndoLateReleaseKeepsHold|TestUndoLateReleaseAfterUnlock|TestUndoLateReleaseSparesRegrant|TestUndoLateReleaseSparesRegrantAfterCounterExpiry|TestReleaseLateFirstAttempt|TestClusterSlotMigration|TestClusterSlotMigrationSemaphores|TestClusterDownRetried|TestLoadingRetried|TestBusyRetried|TestClusterFailover|TestRetryLaterBounded|TestWaiterFallbackAfterBrokenPubSub|TestTryLockBoundedByWaitFrozen|TestWaitEndingAsGranted|TestEndedWaitLeavesNoRegistration|TestFenceCounterExpires|TestFenceCounterNotRearmed|TestFenceCounterRestartedByRedisson|TestMutexRedisRestart|TestFailedUnlockDropsHold|TestGuard[A-Za-z]*|TestCloseDuringGuardedRenewalRound|TestKeySlotServer|TestWatchdogFrozen[A-Za-z]*|TestShardedProbeFrozenNodeSparesOtherNodes|TestMultiLockRollbackFrozenMemberSparesOthers|TestPlainPubSubFrozenNodeSparesOtherNodes|TestEvictionWarningFrozenNodeSparesOtherNodes|TestCloseEndsWaitOnFrozenServer|TestSettleCatchesLateAttempt|TestRecordedDeletionArrivingLateDeletesNothing|TestSemaphoreGuard[A-Za-z]*|TestSemaphoreFailoverGuard|TestPermitSemaphoreFailoverGuard|TestPermitSemaphoreGuard[A-Za-z]*|TestSemaphoreDrain[A-Za-z]*|TestObserverSemaphoreFailoverGuard|TestSemaphoresGuardedNoAlloc|TestPermitExtendGuardedConnBroken|TestExtendGuardedConnBroken|TestExtendShorterLeaseAnnouncedCluster|TestSharedRewaitEndsWithItsWait|TestLeanUndoMarkWaitEndsWithContext|TestWatchdogHoldBusyWithReentries|TestWatchdogReadHoldBusyWithReentries|TestWatchdogSoonKeepsHandOverInterval|TestWatchdogHandOverBesideShorterLease|TestSettleCatchesLateWatchdogReentry|TestExtendRetriedOnRefusal|TestMisconfRetried[A-Za-z]*|TestRedLockTransientRefusalOnMajority|TestCloseUndoesUnknownAcquisition|TestPermitUndoCatchesLateAttempt|TestLateReleaseSparesNewHold|TestUndoCatchesLateAttempt|TestForceUnlockLostReplyEndsOwnHolds|TestTrySetConnectionDrops|TestSemaphoreConnectionDrops|TestLatchConnectionDrops|TestSlotMovedWhileHeld|TestClusterFailoverWhileHeld|TestClusterFailoverWaitersEveryKind|TestClusterFailoverContended|TestClusterPrimaryKilledWhileHeld|TestManyNamesLeaveNoState|TestResubscribedManyTimesLeavesNothing|TestNoKeyLeftWithoutExpiry|TestNoKeyLeftWithoutExpiryOthers|TestList(PrimaryDown|PrimaryDiesAfterScan|PrimaryFailsMidScan|HungFirstPrimaryOneTimeout|PrimaryBusy|CursorAfterFailover|CursorOnUnreadPrimary|CursorAfterPartialStaysPartial|MaxScansSpentOnUnreadPrimary|UnreadNamesRoleError|CursorWithinDownPrimary)|Test[A-Za-z0-9]*Agrees?WithServer)$$
GO127_PKGS ?= $$($(GO) list ./... | grep -v -e /examples/ -e /internal/failover -e /internal/chaos -e /internal/redistest -e /middleware/echolock/v5 $(not_gen))
test-go1.27: deps build-go1.27
	GOTOOLCHAIN=$(GO127) $(GO) version
	GOTOOLCHAIN=$(GO127) $(GO) test $(GO127_RACE) -count=1 -timeout $(TEST_TIMEOUT) -parallel $(GO127_PARALLEL) $(if $(GO127_SKIP),-skip '$(GO127_SKIP)') $(TESTFLAGS) $(GO127_PKGS)
	cd otel && GOTOOLCHAIN=$(GO127) $(GO) test $(GO127_RACE) -count=1 $(TESTFLAGS) ./...

# build-go1.27: the Go 1.27 run's packages and tests, compiled without running any
# (test-go1.27 runs them; prebuild compiles them ahead of it).
build-go1.27:
	GOTOOLCHAIN=$(GO127) $(COMPILE) $(GO127_RACE) $(GO127_PKGS) >/dev/null
	cd otel && GOTOOLCHAIN=$(GO127) $(COMPILE) $(GO127_RACE) ./... >/dev/null

## chaos: the process-level fault suite for CHAOS_DURATION (default 2m), then its summary
CHAOS_DURATION ?= 2m
chaos: deps
	$(COMPILE) ./internal/chaos/ >/dev/null
	CHAOS_DURATION=$(CHAOS_DURATION) $(GO) test -count=1 -timeout 30m -v -run '^TestChaos$$' ./internal/chaos/

## demo: the recharge example, duplicate requests with and without the lock (REDIS_URL, else redis-server, else embedded);
##       make demo ARGS=-postgres stores the orders in a private PostgreSQL server instead of SQLite
ARGS ?=
demo:
	$(GO) run ./examples/recharge/cmd/demo $(ARGS)

## demo-postgres: make demo ARGS=-postgres
demo-postgres:
	$(GO) run ./examples/recharge/cmd/demo -postgres $(ARGS)

## bench: benchmarks with allocation counts
bench: redis-server
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-compare: scriptlock beside redsync, rueidislock, bsm/redislock and bare SET NX PX on one server;
##   BENCH_ROUNDS rounds of every benchmark, library order rotated each round; writes bench/bench.txt,
##   prints benchstat with one column per library (the first, SET NX PX, is the base), draws bench/chart.png;
##   a failed run (a library that errs, or a waiter not granted within the run's 20 s bound) is reported and the
##   other rounds still run; bench-compare fails when a scriptlock run failed, not when only other libraries' did;
##   BENCH_CPUS=0:1 runs the benchmark on CPU 0 and redis-server on CPU 1 (bench-pinned.txt, chart-pinned.png)
bench-compare: redis-server
	@if [ -n "$(BENCH_CPUS)" ] && [ -z "$(bench_server)" ]; then echo "BENCH_CPUS is client:server, e.g. 0:1"; exit 2; fi
	@cd bench && $(GO) test -c -o bench.test . && rm -f $(bench_txt) peers.txt && r=0 && failed=0 && while [ $$r -lt $(BENCH_ROUNDS) ]; do \
	  echo "round $$((r+1)) of $(BENCH_ROUNDS)"; \
	  $(if $(BENCH_CPUS),taskset -c $(bench_client)) ./bench.test -test.run '^$$' -test.bench . -test.benchmem -test.benchtime $(BENCHTIME) -test.count 1 -test.timeout 10m \
	    -rotate=$$r $(if $(BENCH_CPUS),-server-cpus $(bench_server)) $(BENCH_FLAGS) > round.txt || \
	    awk -f failed_runs.awk round.txt >> peers.txt || failed=1; \
	  sed 's/^\(Benchmark[^ \t]*\)[ \t][ \t]*--- FAIL: /--- FAIL: /' round.txt >> $(bench_txt); cat round.txt; rm -f round.txt; r=$$((r+1)); done; \
	  { $(GO) run $(BENCHSTAT) -col /lib $(bench_txt) && $(GO) run ./cmd/chart -o $(bench_png) $(bench_txt) || exit 1; }; \
	  if [ -s peers.txt ]; then echo "bench-compare: runs of other libraries failed (see FAIL above; benchstat's n counts the rounds they finished):"; sort peers.txt | uniq -c; fi; \
	  rm -f peers.txt; if [ $$failed -ne 0 ]; then echo "bench-compare: some benchmark runs failed, see FAIL above"; exit 1; fi

## bench-chart: draw bench/chart.png from bench/bench.txt (ops/s, acquisitions/s and wait p99 per library)
bench-chart:
	cd bench && $(GO) run ./cmd/chart -o chart.png bench.txt
