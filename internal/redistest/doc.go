// Package redistest starts real redis-server processes for tests: standalone
// nodes, groups of independent nodes (RedLock), a primary with a replica,
// small clusters, and Sentinel deployments (a primary, two replicas and three
// sentinels; Failover and KillPrimary trigger a failover and return the new
// primary once every sentinel agrees on it). Every process is started by the test that needs it and
// stopped by that test's t.Cleanup.
//
// # Running
//
//	make test                                # installs redis-server and redis-sentinel with apt-get when run as root
//	go test -race ./internal/redistest/...   # redis-server and redis-cli must be in PATH
//
// A missing redis-server or redis-cli fails the test with the install command;
// it is never skipped.
//
// # What it does
//
// Each node listens on 127.0.0.1 only, on a free port the kernel hands out
// (listen on :0, close, start; on a bind race it picks another port and
// retries), claimed for the node's whole life with internal/portclaim: a
// killed node's port is handed to no other node or netproxy of any test
// process until its test ends, so it keeps refusing connections. Each node gets its own t.TempDir() holding the generated
// redis.conf (port, bind 127.0.0.1, protected-mode no, save "", appendonly
// per WithAOF, dir), redis.log (stdout and stderr of the server) and any data
// files. Replicas sync from disk (repl-diskless-sync no), so a write on the
// primary reaches a new replica within milliseconds, and DEBUG is enabled for
// local connections (enable-debug-command local) for fault tests such as
// DEBUG SLEEP. WithTLS gives each node a TLS port too, with certificates
// from a private CA made for it (one per Cluster, whose bus then runs on TLS,
// and one per Sentinel deployment, whose replication and sentinel links do)
// and client certificates required (TLSAddr, TLS); WithSentinelPassword makes
// the sentinels require a password. A node is ready when it answers PING and reports the pid the harness
// started, so a foreign server that happens to hold the port is never used.
// Cluster waits until every node reports cluster_state:ok and all nodes agree
// on the slot map, and with replicas until they are in sync and every node's
// CLUSTER SLOTS lists them. Replicated waits until the replica's master_link_status is
// up. Sentinel waits until every sentinel knows both replicas and the other
// two sentinels; sentinels run as redis-sentinel, or redis-server --sentinel
// where redis-sentinel is not installed.
//
// At test end the cleanup sends SIGCONT (in case of Pause), then SIGTERM, then
// SIGKILL after 5 s, and reaps the process. Cleanups run when the test fails or
// panics too; on Linux the kernel also kills the servers when the test binary
// dies without running them (timeout, os.Exit). When the test failed, the
// last lines of each node's log are written to the test log.
//
// # What it never does
//
// It never connects to, stops or signals a process it did not start, never
// uses port 6379 or a non-loopback address, never reads REDIS_ADDR or other
// environment variables, and never skips a test.
//
// # Goroutine leak checks
//
// Servers and clients are stopped by t.Cleanup, which runs after deferred
// calls. Check for leaks with goleak.VerifyTestMain, or with
// goleak.VerifyNone registered through t.Cleanup before the first server is
// started, never with a plain defer at the top of the test. Pass
// LeakOptions() to either, for the goroutine rueidis's cluster client may
// leave sleeping for a few seconds after Close and for the harness's reaper
// of a restarted server (IgnoreReaper alone covers the latter).
package redistest
