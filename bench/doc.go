// Package bench compares scriptlock with other Go Redis lock libraries
// (redsync, rueidislock, bsm/redislock) and with the bare SET NX PX plus
// compare-and-delete pair, side by side, in one run, against the same real
// redis-server. It is its own module so the library's module does not depend
// on its competitors.
//
// Beside ops/s (acquisitions/s and wait percentiles when contended) every
// benchmark reports, per operation, the commands the server executed
// (srv-cmds/op, from INFO commandstats: a script's EVALSHA and each command
// it redis.call'ed count separately), the scripts among them
// (srv-scripts/op), the server's reads from its clients (srv-reads/op, INFO
// stats), server CPU (srv-cpu-us/op, INFO cpu), the CPU of the benchmark
// process (cli-cpu-us/op, getrusage) and its write system calls
// (cli-writes/op, /proc/self/io, Linux only): how well requests were
// batched on their way to the server and back.
//
// The client and the server share the machine's CPUs unless -server-cpus
// puts the server on CPUs of its own (start the benchmark itself under
// taskset on the others, as make bench-compare BENCH_CPUS=0:1 does). Each
// run prints a "cpus:" line that says which.
//
//	make bench-compare                      # from the repository root: 8 rounds, benchstat, chart.png
//	make bench-compare BENCH_CPUS=0:1       # the same with client and server on separate CPUs
//	make bench-compare BENCH_FLAGS=-flush-delay=20us  # every rueidis client with MaxFlushDelay 20µs
//	go test -run '^$' -bench . -args -cmds  # one round, with each run's per-op command mix
//	go run ./cmd/chart -o chart.png bench.txt
package bench
