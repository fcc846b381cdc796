// Command demo runs the recharge scenario twice — with scriptlock's order
// locks and with -unsafe (no lock, unchecked write) — over HTTP and gRPC, and prints what was
// credited. It exits 0 only when the locked run credited every order exactly
// once.
//
// Redis: REDIS_URL when set (redis://host:port/db); otherwise a redis-server
// from PATH, started on a free loopback port and stopped at the end;
// otherwise an embedded, in-process Redis-compatible server (miniredis).
// The database is SQLite in a temporary directory, or with -postgres a private
// PostgreSQL server (initdb in a temporary directory, loopback port; run as
// the user nobody when the demo runs as root), one new database per run.
//
//	go run ./examples/recharge/cmd/demo [-orders 100] [-duplicates 10] [-postgres] [-embedded]
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/examples/recharge/scenario"
	"github.com/scriptlock/scriptlock/internal/pgtest"
)

func main() {
	os.Exit(run())
}

func run() int {
	orders := flag.Int("orders", 100, "unpaid orders to recharge")
	dups := flag.Int("duplicates", 10, "concurrent duplicate recharge requests per order")
	embedded := flag.Bool("embedded", false, "use the embedded in-process Redis even if REDIS_URL is set or redis-server is installed")
	usePG := flag.Bool("postgres", false, "store orders in a private PostgreSQL server started for the demo instead of SQLite")
	flag.Parse()
	// Checked before anything starts: the scenario would replace a count
	// below 1 with its default, under a header announcing this one.
	for _, f := range []struct {
		name string
		n    int
	}{{"-orders", *orders}, {"-duplicates", *dups}} {
		if f.n < 1 {
			fmt.Fprintf(os.Stderr, "demo: %s %d: must be at least 1\n", f.name, f.n)
			return 2
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := os.Stdout

	redis, err := startRedis(ctx, *embedded)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		return 2
	}
	defer redis.Close()
	fmt.Fprintf(out, "Redis:  %s\n", redis.describe)

	dir, err := os.MkdirTemp("", "recharge-demo-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	var openStore func(context.Context) (*recharge.Store, error)
	if *usePG {
		pg, err := pgtest.New()
		if pg != nil {
			defer pg.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "demo: PostgreSQL:", err)
			return 2
		}
		fmt.Fprintf(out, "PostgreSQL: private server on %s, data in %s (removed at exit)\n", pg.Addr, pg.Dir)
		openStore = func(ctx context.Context) (*recharge.Store, error) {
			dsn, err := pg.CreateDatabase(ctx)
			if err != nil {
				return nil, err
			}
			return recharge.OpenPostgres(ctx, dsn)
		}
	} else {
		fmt.Fprintf(out, "SQLite: %s (removed at exit)\n", dir)
	}

	// Keys go under a prefix of their own, so a shared Redis (REDIS_URL) is
	// not disturbed; they are deleted at the end.
	prefix := "scriptlock-demo:" + randomHex(4) + ":"
	defer redis.cleanup(prefix)
	opts := []scriptlock.Option{scriptlock.WithKeyPrefix(prefix)}
	if redis.embedded {
		// miniredis has no replication: nothing for the failover guard to wait for.
		opts = append(opts, scriptlock.WithFailoverGuard(false, 0))
	}
	locks, err := scriptlock.New(redis.client, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		return 2
	}
	defer locks.Close()

	fmt.Fprintf(out, "\n%d unpaid orders; %d concurrent duplicate recharge requests per order, over HTTP and over gRPC.\n",
		*orders, *dups)
	fmt.Fprintln(out, "Locked: each request locks order:<id>, then claims the order with its fencing token and pays it once.")
	fmt.Fprintln(out, "Unsafe: the service started with -unsafe: no lock, no token, a write that does not check the order is unpaid.")
	fmt.Fprintln(out)

	var reports []*scenario.Report
	for _, unsafe := range []bool{false, true} {
		for _, tr := range []scenario.Transport{scenario.HTTP, scenario.GRPC} {
			label := mode(unsafe) + " " + string(tr)
			fmt.Fprintf(out, "running %s ...\n", label)
			rep, err := scenario.Run(ctx, scenario.Config{
				Transport: tr, Locks: locks, Unsafe: unsafe, Dir: dir, OpenStore: openStore,
				Orders: *orders, Duplicates: *dups, Progress: out, Label: label,
			})
			if err != nil {
				fmt.Fprintf(os.Stderr, "demo: %s: %v\n", label, err)
				return 2
			}
			reports = append(reports, rep)
		}
	}
	fmt.Fprintln(out)
	printTable(out, reports)
	fmt.Fprintln(out)

	ok := true
	for _, r := range reports {
		if r.Unsafe {
			continue
		}
		if !r.ExactlyOnce() {
			ok = false
			fmt.Fprintf(out, "FAIL  locked %s: %d credits for %d orders, balance %s, expected %s\n",
				r.Transport, r.Credits, r.Orders, money(r.Actual), money(r.Expected))
		}
	}
	if ok {
		fmt.Fprintln(out, "OK    locked: every order credited exactly once, over HTTP and over gRPC.")
	}
	for _, r := range reports {
		if r.Unsafe && r.Credits > int64(r.Orders) {
			fmt.Fprintf(out, "      unsafe %s: %d credits for %d orders, %s paid out too much: a check-then-act with no lock and an unchecked write.\n",
				r.Transport, r.Credits, r.Orders, money(r.Actual-r.Expected))
		}
	}
	if !ok {
		return 1
	}
	return 0
}

func mode(unsafe bool) string {
	if unsafe {
		return "unsafe"
	}
	return "locked"
}

func printTable(w io.Writer, reports []*scenario.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\ttransport\torders\trequests\tcredits\texpected balance\tactual balance\tlock waits\t409s/retries\tp50\tp99\ttime\t")
	for _, r := range reports {
		waits := "-"
		if !r.Unsafe {
			waits = fmt.Sprint(r.Lock.Waited)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n",
			mode(r.Unsafe), r.Transport, r.Orders, r.Requests, r.Credits,
			money(r.Expected), money(r.Actual), waits, r.Retries,
			ms(r.P50), ms(r.P99), ms(r.Elapsed))
	}
	tw.Flush()
}

func money(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

func ms(d time.Duration) string {
	if d >= 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// cleanup deletes the demo's keys: the locks' keys and their
// redisson_*:{<name>} companions all contain prefix.
func (r *redisEnv) cleanup(prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := r.client
	var cursor uint64
	for {
		e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match("*"+escapeGlob(prefix)+"*").Count(500).Build()).AsScanEntry()
		if err != nil {
			return
		}
		cmds := make(rueidis.Commands, 0, len(e.Elements))
		for _, k := range e.Elements { // one by one: keys of different locks may live on different cluster slots
			cmds = append(cmds, c.B().Unlink().Key(k).Build())
		}
		c.DoMulti(ctx, cmds...)
		if cursor = e.Cursor; cursor == 0 {
			return
		}
	}
}

func escapeGlob(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`).Replace(s)
}
