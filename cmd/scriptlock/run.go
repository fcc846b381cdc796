package main

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"github.com/scriptlock/scriptlock/internal/layout"
)

// Exit codes, stable for scripts.
const (
	exitOK           = 0
	exitFailure      = 1
	exitUsage        = 2
	exitNotFound     = 3
	exitNotConfirmed = 4
	exitNotALock     = 5
	// exitPartial: list read some primaries and not others.
	exitPartial = 6
)

// defaultURL is the Redis used without --url and $SCRIPTLOCK_URL.
var defaultURL = "redis://127.0.0.1:6379"

// minTimeout is the shortest --timeout.
const minTimeout = time.Millisecond

// maxNameLen matches scriptlock.MaxNameLen: longer names cannot be locks
// (the key prefix not counted).
const maxNameLen = 1024

// exitError carries an exit code with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func failf(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// env is what every command gets: its options, the connection and the
// streams it reads and writes.
type env struct {
	rc        rueidis.Client
	keyPrefix string
	json      bool
	// nameB64: NAME arguments are the base64 of the whole key (--json's
	// key_base64), --key-prefix not added.
	nameB64 bool
	timeout time.Duration
	sharded string
	// publish is publishCommand's answer, kept: watch inspects every
	// interval and would ask the server each time.
	publish string

	// db is the URL's database (/N or ?db=N), which names a listing with
	// its prefix (list's cursor).
	db int

	// command flags
	prefix     string        // list
	limit      int           // list, inspect
	cursor     string        // list
	maxScans   int           // list
	yes        bool          // force-unlock
	interval   time.Duration // watch
	idemPrefix string        // acl-user
	readOnly   bool          // acl-user

	in     io.Reader
	out    io.Writer
	errOut io.Writer
	// phase is where the command is, for what an interrupt leaves.
	phase *phase
}

// command is one subcommand: its own flags and its action.
type command struct {
	name, args, help string
	flags            func(fs *flag.FlagSet, e *env)
	// check refuses bad values of the command's flags before anything is
	// dialled, so that they exit 2 whether or not Redis answers.
	check func(e *env) error
	nargs int
	run   func(ctx context.Context, e *env, args []string) error
	// local, set instead of run, needs no Redis: nothing is dialled, and
	// its arguments are no lock names.
	local func(e *env, args []string) error
}

const usage = `usage: scriptlock [flags] COMMAND [flags] [ARGS]

Commands:
  inspect NAME         holders, lease, fencing token, queue, readers, permits, count
  list [--prefix P]    locks currently held (SCAN on every primary, cursor-based)
  force-unlock NAME    delete a lock whoever holds it and wake its waiters
  watch NAME           print every change of holders and waiters until interrupted
  acl-user USER        print the ACL SETUSER command of a user for the Clients of --key-prefix

Exit codes: 0 done, 1 Redis failure, 2 usage, 3 nothing found,
4 force-unlock not confirmed, 5 not a lock, 6 list partial (a primary unread).

Flags:
`

func run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer) int {
	var (
		u       = envOr("SCRIPTLOCK_URL", defaultURL)
		tf      = tlsFlags{ca: os.Getenv("SCRIPTLOCK_TLS_CA"), cert: os.Getenv("SCRIPTLOCK_TLS_CERT"), key: os.Getenv("SCRIPTLOCK_TLS_KEY")}
		sa      = sentinelAuth{user: os.Getenv("SCRIPTLOCK_SENTINEL_USER"), password: os.Getenv("SCRIPTLOCK_SENTINEL_PASSWORD")}
		e       = &env{in: in, out: out, errOut: errOut, timeout: 5 * time.Second, sharded: "auto", limit: 100}
		extra   = map[string]func(*flag.FlagSet, *env){}
		cmdName string
	)
	cmds := commands()
	for _, c := range cmds {
		if c.flags != nil {
			extra[c.name] = c.flags
		}
	}
	common := func(fs *flag.FlagSet) {
		fs.StringVar(&u, "url", u, "Redis URL: redis://, rediss:// (TLS), user:password@ (ACL), ?addr= more seeds, ?master_set= Sentinel; $SCRIPTLOCK_URL when set, else the default")
		fs.StringVar(&e.keyPrefix, "key-prefix", "", "key prefix the Clients use (WithKeyPrefix)")
		fs.BoolVar(&e.json, "json", false, "JSON output")
		fs.BoolVar(&e.nameB64, "name-base64", false, "NAME is the standard base64 of the whole key, --key-prefix included, as --json's key_base64 gives it (for keys that are not UTF-8)")
		fs.DurationVar(&e.timeout, "timeout", e.timeout, "bound on each Redis round trip, 1ms or more")
		fs.StringVar(&e.sharded, "sharded", e.sharded, "release messages on sharded pub/sub: auto (on a Cluster that supports it), on, off")
		fs.StringVar(&tf.ca, "tls-ca", tf.ca, "rediss://: PEM file of the CAs that sign the server's certificate, instead of the system's (default $SCRIPTLOCK_TLS_CA)")
		fs.StringVar(&tf.cert, "tls-cert", tf.cert, "rediss://: PEM client certificate, for a server that requires one (default $SCRIPTLOCK_TLS_CERT)")
		fs.StringVar(&tf.key, "tls-key", tf.key, "rediss://: PEM key of --tls-cert (default $SCRIPTLOCK_TLS_KEY)")
		fs.StringVar(&tf.serverName, "tls-server-name", "", "rediss://: name the server's certificate must show (default: the URL's host)")
		fs.StringVar(&sa.user, "sentinel-user", sa.user, "?master_set=: ACL user for the sentinels, when they require one (default $SCRIPTLOCK_SENTINEL_USER)")
		fs.StringVar(&sa.password, "sentinel-password", sa.password, "?master_set=: password for the sentinels (default $SCRIPTLOCK_SENTINEL_PASSWORD, which keeps it out of the process list)")
	}
	// Flags may come before or after the command and its arguments.
	fs := flag.NewFlagSet("scriptlock", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	common(fs)
	var positional []string
	rest := args
	parsed := false
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printUsage(errOut, cmds, common, extra)
				return exitOK
			}
			fmt.Fprintf(errOut, "scriptlock: %v\n", err)
			return exitUsage
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		positional = append(positional, rest[0])
		rest = rest[1:]
		if !parsed && len(positional) == 1 {
			cmdName = positional[0]
			if add, ok := extra[cmdName]; ok {
				add(fs, e)
			}
			parsed = true
		}
	}
	if len(positional) == 0 {
		printUsage(errOut, cmds, common, extra)
		return exitUsage
	}
	var cmd *command
	for i := range cmds {
		if cmds[i].name == cmdName {
			cmd = &cmds[i]
		}
	}
	if cmd == nil {
		fmt.Fprintf(errOut, "scriptlock: unknown command %q (inspect, list, force-unlock, watch, acl-user)\n", cmdName)
		return exitUsage
	}
	positional = positional[1:]
	if len(positional) != cmd.nargs {
		fmt.Fprintf(errOut, "usage: scriptlock %s %s\n", cmd.name, cmd.args)
		return exitUsage
	}
	switch e.sharded {
	case "auto", "on", "off":
	default:
		fmt.Fprintf(errOut, "scriptlock: --sharded must be auto, on or off, got %q\n", e.sharded)
		return exitUsage
	}
	if e.timeout < minTimeout {
		// A shorter one fits no round trip: every command would fail with
		// an i/o timeout that blames the network.
		fmt.Fprintf(errOut, "scriptlock: --timeout must be at least %s, got %s\n", minTimeout, e.timeout)
		return exitUsage
	}
	if cmd.local != nil {
		if err := cmd.local(e, positional); err != nil {
			fmt.Fprintf(errOut, "scriptlock %s: %v\n", cmd.name, err)
			var xe *exitError
			if errors.As(err, &xe) {
				return xe.code
			}
			return exitFailure
		}
		return exitOK
	}
	if e.nameB64 && len(positional) > 0 {
		for i, a := range positional {
			b, err := base64.StdEncoding.DecodeString(a)
			if err != nil {
				fmt.Fprintf(errOut, "scriptlock: --name-base64: %q is not standard base64: %v\n", a, err)
				return exitUsage
			}
			positional[i] = string(b)
		}
		// The decoded name is the whole key: the prefix is in it already.
		e.keyPrefix = ""
	}
	for _, a := range positional {
		// A name, not a key: the Client's key prefix, of any length, is not
		// counted. A whole key (--name-base64) is not bounded, for that prefix.
		if !e.nameB64 && a == "" {
			// No lock has an empty name (a Client refuses one): with a key
			// prefix the prefix alone would be taken for the key, another
			// lock's (an unset "$NAME" in a script).
			fmt.Fprintf(errOut, "scriptlock: empty name\n")
			return exitUsage
		}
		if !e.nameB64 && len(a) > maxNameLen {
			fmt.Fprintf(errOut, "scriptlock: name is %d bytes, longer than %d\n", len(a), maxNameLen)
			return exitUsage
		}
		if err := checkName(e.keyPrefix + a); err != nil {
			fmt.Fprintf(errOut, "scriptlock: %v\n", err)
			return exitUsage
		}
	}
	if cmd.check != nil {
		if err := cmd.check(e); err != nil {
			fmt.Fprintf(errOut, "scriptlock %s: %v\n", cmd.name, err)
			return exitUsage
		}
	}
	tlsCfg, err := tf.config()
	if err != nil {
		fmt.Fprintf(errOut, "scriptlock: %v\n", err)
		return exitUsage
	}
	return e.runInterruptible(ctx, cmd, func() (int, func()) {
		code := e.session(ctx, cmd, positional, u, tf, tlsCfg, sa, fs)
		return code, func() {
			if e.rc != nil {
				closeClient(e.rc)
			}
		}
	})
}

// session connects and runs the command, writing through e's writers.
func (e *env) session(ctx context.Context, cmd *command, positional []string, u string, tf tlsFlags, tlsCfg *tlsChange, sa sentinelAuth, fs *flag.FlagSet) int {
	errOut := e.errOut
	rc, err := connect(u, e.timeout, tlsCfg, sa)
	if err != nil && ctx.Err() != nil {
		if rc != nil {
			closeClient(rc)
		}
		return e.interrupted(errOut, cmd)
	}
	if err != nil {
		fmt.Fprintf(errOut, "scriptlock: connect %s: %v%s%s%s\n", redactURL(u), escapedError{err}, tlsHint(u, tf, err), authHint(u, err), defaultURLHint(fs, err))
		var xe *exitError
		if errors.As(err, &xe) {
			return xe.code
		}
		return exitFailure
	}
	e.rc = rc // closed by the caller once the outcome is reported
	if opt, err := rueidis.ParseURL(u); err == nil {
		e.db = opt.SelectDB // connect parsed it already
	}
	e.phase.set(phaseRunning)
	if err := checkClusterMode(ctx, e); err != nil {
		fmt.Fprintf(errOut, "scriptlock: %v\n", escapedError{err})
		return exitFailure
	}
	for _, a := range positional {
		if err := checkDeployment(rc, e.keyPrefix+a); err != nil {
			fmt.Fprintf(errOut, "scriptlock: %v\n", err)
			return exitUsage
		}
	}
	if err := cmd.run(ctx, e, positional); err != nil {
		var xe *exitError
		if ctx.Err() != nil && !errors.As(err, &xe) {
			// A call cut short by the interrupt, not a failure of the
			// server's: say what that leaves, not "context canceled".
			return e.interrupted(errOut, cmd)
		}
		// The server's refusals can repeat a lock's name as it is (an
		// unknown command's names its first arguments): escaped as
		// everything else printed shows a name.
		fmt.Fprintf(errOut, "scriptlock %s: %v\n", cmd.name, escapedError{err})
		if errors.As(err, &xe) {
			return xe.code
		}
		return exitFailure
	}
	return exitOK
}

// interruptGrace is how long an interrupted command is given to end by
// itself, saying what it did, before it is given up on.
const interruptGrace = 100 * time.Millisecond

// Where a command is, for what an interrupt leaves.
const (
	phaseConnecting int32 = iota
	phaseRunning
	// phaseWriting: force-unlock sent its delete; until the server answers,
	// whether the lock was released is unknown.
	phaseWriting
)

// phase is where a command is (phaseConnecting, ...); a nil phase ignores
// set and reads as running.
type phase struct{ v atomic.Int32 }

func (p *phase) set(v int32) {
	if p != nil {
		p.v.Store(v)
	}
}

func (p *phase) get() int32 {
	if p == nil {
		return phaseRunning
	}
	return p.v.Load()
}

// gate passes writes on until closed, then drops them: the output of a
// command given up on, which may go on for a while, stops where the message
// saying it was interrupted begins.
type gate struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return len(p), nil
	}
	return g.w.Write(p)
}

// close drops the writes after it, once a write under way has ended: the
// caller writes to (and a test reads) what the gate wrapped next.
func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// runInterruptible runs f, which connects and runs cmd through e and returns
// its exit code and a cleanup, on a goroutine of its own, and returns that
// code; once ctx ends (interrupted) and f has not returned its code within
// interruptGrace, it gives f up, says what the interrupt leaves and returns.
// rueidis is deaf to an interrupt while it dials (the handshake waits for the
// server up to --timeout) and while it closes a connection it redials (up to
// a second for the reply to its closing PING): against a server that stopped
// answering (SIGSTOP, a hung host behind a live kernel) an operator pressing
// Ctrl-C would wait that out. f, given up on, ends by itself within those bounds,
// its output dropped; the process exits meanwhile.
func (e *env) runInterruptible(ctx context.Context, cmd *command, f func() (int, func())) int {
	errOut := e.errOut
	gOut, gErr := &gate{w: e.out}, &gate{w: e.errOut}
	e.out, e.errOut = gOut, gErr
	e.phase = &phase{}
	// The outcome is reported before the cleanup (closing the client, which
	// may take a while on a loaded machine or against a stalled server): an
	// interrupted command that has said what it did is not given up on while
	// it closes. Uninterrupted, the cleanup is waited for.
	code := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, cleanup := f()
		code <- c
		if cleanup != nil {
			cleanup()
		}
	}()
	select {
	case <-done:
		return <-code
	case <-ctx.Done():
	}
	t := time.NewTimer(interruptGrace)
	defer t.Stop()
	select {
	case c := <-code:
		return c
	case <-t.C:
	}
	select { // an outcome that came with the timer
	case c := <-code:
		return c
	default:
	}
	gOut.close()
	gErr.close()
	return e.interrupted(errOut, cmd)
}

// interrupted says what an interrupt leaves, given where the command was,
// and returns the exit code: watch ends that way (exit 0); any other
// command failed to finish (exit 1).
func (e *env) interrupted(w io.Writer, cmd *command) int {
	if cmd.name == "watch" {
		return exitOK
	}
	switch e.phase.get() {
	case phaseConnecting:
		fmt.Fprintf(w, "scriptlock %s: interrupted while connecting (the server had not answered); nothing changed\n", cmd.name)
	case phaseWriting:
		fmt.Fprintf(w, "scriptlock %s: interrupted before the server answered: the lock may or may not have been released; see with scriptlock inspect (same URL and name)\n", cmd.name)
	default:
		if cmd.name == "force-unlock" {
			fmt.Fprintf(w, "scriptlock %s: interrupted before the server answered; nothing changed\n", cmd.name)
		} else {
			fmt.Fprintf(w, "scriptlock %s: interrupted before the server answered\n", cmd.name)
		}
	}
	return exitFailure
}

func commands() []command {
	return []command{
		{name: "inspect", args: "[--limit N] NAME", help: "show every lock layout under NAME", nargs: 1, flags: inspectFlags, check: inspectCheck, run: inspectCmd},
		{name: "list", args: "[--prefix P] [--limit N] [--cursor C]", help: "list locks currently held", nargs: 0,
			flags: listFlags, check: listCheck, run: listCmd},
		{name: "force-unlock", args: "[--yes] NAME", help: "release a lock whoever holds it", nargs: 1,
			flags: unlockFlags, run: unlockCmd},
		{name: "watch", args: "[--interval D] NAME", help: "follow a lock until interrupted", nargs: 1,
			flags: watchFlags, check: watchCheck, run: watchCmd},
		{name: "acl-user", args: "[--key-prefix P] [--idempotency-prefix P] [--read-only] USER", help: "print the ACL user for the Clients of a key prefix", nargs: 1,
			flags: aclFlags, local: aclCmd},
	}
}

func printUsage(w io.Writer, cmds []command, common func(*flag.FlagSet), extra map[string]func(*flag.FlagSet, *env)) {
	fmt.Fprint(w, usage)
	fs := flag.NewFlagSet("scriptlock", flag.ContinueOnError)
	fs.SetOutput(w)
	common(fs)
	// Defaults come from the environment (and flags already parsed): show
	// them without their secrets.
	if f := fs.Lookup("url"); f != nil {
		f.DefValue = redactURL(f.DefValue)
	}
	if f := fs.Lookup("sentinel-password"); f != nil {
		f.DefValue = ""
	}
	fs.PrintDefaults()
	for _, c := range cmds {
		if add := extra[c.name]; add != nil {
			fmt.Fprintf(w, "\n%s flags:\n", c.name)
			fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
			fs.SetOutput(w)
			add(fs, &env{limit: 100})
			fs.PrintDefaults()
		}
	}
}

// checkName refuses keys no lock can have, before anything is sent. Their
// length is not bounded: a lock's name is (maxNameLen), its Client's key
// prefix is not.
func checkName(key string) error {
	if key == "" {
		return failf(exitUsage, "empty name")
	}
	// A '{' or '}' that makes no hash tag is Redisson's to take on a single
	// node (a Client refuses it): such a name is checked against the
	// deployment once connected (checkDeployment).
	if layout.Companion(key) {
		// Another lock's fencing counter, queue, call record, permit leases or read lease:
		// read as a lock it would mislead, and force-unlock would delete it.
		return failf(exitUsage, "%q is a key another lock keeps beside its own (its fencing counter, queue, a call's record, a permit semaphore's leases or a read hold's lease), not a lock", key)
	}
	if layout.WholeTag(key) {
		// Its fencing counter, queues, Go waiters and channels are those
		// of the key inside the braces: read as its own they would show
		// that lock's token and waiters, and force-unlock would wake that
		// lock's waiter. Clients refuse such a name.
		return failf(exitUsage, "%q is one whole hash tag, whose fencing counter, queues, waiters and channels are those of %q (Redisson derives the same keys for both; scriptlock Clients refuse the name): inspect %q, or delete the key itself with redis-cli", key, key[1:len(key)-1], key[1:len(key)-1])
	}
	return nil
}

// tagless reports whether key has a '{' or '}' but no hash tag: Redis
// hashes the whole key, while the keys Redisson derives from it take
// another slot ("redisson_lock__channel:{a}b}" hashes "a").
func tagless(key string) bool {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return strings.IndexByte(key, '}') >= 0
	}
	return strings.IndexByte(key[i+1:], '}') <= 0
}

// checkDeployment refuses, on a Cluster, a name whose lock and companion
// keys lie in different slots: no lock can have it there (Redisson's own
// calls on it fail with CROSSSLOT), and reading it would fail the same way.
// A single node, or Sentinel's primary, holds every key: Redisson locks
// under such names work there and are read as any other.
func checkDeployment(rc rueidis.Client, key string) error {
	if rc.Mode() == rueidis.ClientModeCluster && tagless(key) {
		return failf(exitUsage, "%q has '{' or '}' without a hash tag {...}: on a Cluster the keys and channels of a lock under it lie in other slots than the lock, so no lock can have this name there", key)
	}
	return nil
}

// checkClusterMode refuses a Cluster node the client took for a single node.
// rueidis does so with one seed whose CLUSTER SLOTS failed with an error
// naming CLUSTER, taking it for a server without Cluster support: a user
// refused CLUSTER SLOTS, which no @read grants, gets one. Read so, one
// primary would pass for the whole keyspace (list would leave out the other
// primaries' locks and exit 0), and a lock's keys would be laid out as on a
// single node. HELLO, which every user may send, gives the server's mode.
func checkClusterMode(ctx context.Context, e *env) error {
	if e.rc.Mode() != rueidis.ClientModeStandalone {
		return nil
	}
	bctx, cancel := e.bounded(ctx)
	defer cancel()
	info, err := e.rc.Do(bctx, e.rc.B().Hello().Build()).AsMap()
	if _, refused := rueidis.IsRedisErr(err); refused {
		// Before Redis 6: no HELLO, nor ACL users, nor a refused CLUSTER SLOTS.
		return nil
	}
	if err != nil {
		return fmt.Errorf("HELLO: %w", err)
	}
	m := info["mode"]
	if mode, _ := m.ToString(); mode != "cluster" {
		return nil
	}
	why := e.rc.Do(bctx, e.rc.B().ClusterSlots().Build()).Error()
	if why == nil {
		why = errors.New("answered now, refused when the client connected")
	}
	return fmt.Errorf("the server is a Cluster node, and the client could not learn the Cluster's slots from it (CLUSTER SLOTS: %w): its other primaries would go unread; grant the user +cluster|slots (+cluster|shards from Redis 8)", why)
}

// closeWait bounds how long a command waits, once done, for its connection
// to close.
const closeWait = 100 * time.Millisecond

// closeClient closes rc, waiting at most closeWait: the command has said
// what it had to, and the process exits next. rueidis's Close waits for the
// server's reply to its closing PING, up to a second against a server that
// stopped answering (SIGSTOP, a hung host behind a live kernel): an
// interrupt, or a round trip that ran out of --timeout, would exit that much
// later. The close goes on by itself and ends within that second.
func closeClient(rc rueidis.Client) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		rc.Close()
	}()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// connect opens a client on a Redis URL as rueidis parses it: single node,
// Sentinel (master_set) or Cluster (detected), TLS and ACL included. tc, from
// the --tls-* flags, changes the TLS settings of a rediss:// URL; sa is what
// the sentinels of a master_set URL require (the URL's own user and password
// are the data nodes').
func connect(u string, timeout time.Duration, tc *tlsChange, sa sentinelAuth) (rueidis.Client, error) {
	opt, err := rueidis.ParseURL(u)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// The parser's message quotes pieces of the URL, the password's
			// among them: say what is wrong without it.
			if !strings.Contains(u, "://") {
				// 10.0.0.5:6379: an address, not a URL.
				return nil, failf(exitUsage, "the URL does not parse: it has no scheme (write redis://HOST:PORT, rediss:// for TLS)")
			}
			return nil, failf(exitUsage, "the URL does not parse (percent-encode : @ / ? # %% in a user name or password)")
		}
		return nil, failf(exitUsage, "%s", strings.ReplaceAll(err.Error(), u, redactURL(u)))
	}
	if err := checkURLParams(u); err != nil {
		return nil, err
	}
	if tc != nil {
		if opt.TLSConfig == nil {
			return nil, failf(exitUsage, "--tls-* flags (and $SCRIPTLOCK_TLS_*) need a rediss:// URL")
		}
		tc.apply(opt.TLSConfig)
	}
	opt.DisableCache = true
	if opt.Dialer.Timeout == 0 {
		opt.Dialer.Timeout = timeout
	}
	if opt.ConnWriteTimeout == 0 {
		opt.ConnWriteTimeout = timeout
	}
	if sa != (sentinelAuth{}) && opt.Sentinel.MasterSet == "" {
		return nil, failf(exitUsage, "--sentinel-user and --sentinel-password (and $SCRIPTLOCK_SENTINEL_*) need a ?master_set= URL")
	}
	if opt.Sentinel.MasterSet != "" {
		// rueidis dials the sentinels with settings of their own: give them
		// the same dial timeout, and TLS with a rediss:// URL, as the primary.
		opt.Sentinel.Dialer = opt.Dialer
		if opt.TLSConfig != nil {
			opt.Sentinel.TLSConfig = opt.TLSConfig.Clone()
		}
		opt.Sentinel.Username, opt.Sentinel.Password = sa.user, sa.password
	}
	first := opt
	var dials *seedDials
	if len(opt.InitAddress) > 1 && opt.Sentinel.MasterSet == "" {
		dials = &seedDials{}
		first.DialCtxFn = dials.dial(opt.DialCtxFn)
	}
	rc, err := rueidis.NewClient(first)
	dials.settle(err != nil)
	if err != nil && unavailable(err) && len(opt.InitAddress) > 1 && opt.Sentinel.MasterSet == "" {
		// rueidis asks the Cluster's layout of the first seed to answer its
		// dial only: one busy running a script (HELLO is still served) or
		// loading its dataset fails the connection, though the other seeds
		// would give the layout, and list would name that primary unread.
		for _, a := range opt.InitAddress {
			one := opt
			one.InitAddress = []string{a}
			c, e := rueidis.NewClient(one)
			if e != nil {
				continue
			}
			if c.Mode() == rueidis.ClientModeCluster {
				return c, nil
			}
			// A seed alone that gives no layout is taken for a single
			// server (a replica given beside its busy primary): several
			// seeds name a Cluster, as rueidis holds when the first to
			// answer is idle.
			closeClient(c)
		}
	}
	return rc, err
}

// seedDials are the connections a client dials while it connects to several
// seeds. rueidis dials them all at once and asks the first to answer for the
// layout: when that one fails the connection, a seed that answers later is
// added to the failed client and left open, beside the client the command
// goes on with (a fallback to each seed alone), until the process exits.
type seedDials struct {
	mu      sync.Mutex
	conns   []net.Conn
	settled bool // the client connected, or failed
	failed  bool
}

// dial dials as next does (as rueidis does when nil), keeping each
// connection until the client settles; once it failed, a connection
// dialled is closed at once.
func (s *seedDials) dial(next func(context.Context, string, *net.Dialer, *tls.Config) (net.Conn, error)) func(context.Context, string, *net.Dialer, *tls.Config) (net.Conn, error) {
	return func(ctx context.Context, dst string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
		var c net.Conn
		var err error
		switch {
		case next != nil:
			c, err = next(ctx, dst, d, cfg)
		case cfg != nil:
			c, err = (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, "tcp", dst)
		default:
			c, err = d.DialContext(ctx, "tcp", dst)
		}
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.failed {
			c.Close()
			return nil, net.ErrClosed
		}
		if !s.settled {
			s.conns = append(s.conns, c)
		}
		return c, nil
	}
}

// settle ends the keeping: a client that connected owns its connections;
// those of one that failed are closed, and so are the ones it dials after.
func (s *seedDials) settle(failed bool) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settled, s.failed = true, failed
	if failed {
		for _, c := range s.conns {
			c.Close()
		}
	}
	s.conns = nil
}

// urlParams are the query parameters rueidis.ParseURL reads.
var urlParams = []string{"addr", "client_cache", "client_name", "db", "dial_timeout", "master_set",
	"max_retries", "protocol", "skip_verify", "write_timeout"}

// checkURLParams refuses a query parameter rueidis does not read, or a query
// that does not parse: rueidis would ignore it, and a misspelt one
// (?database=1, ?master_name=) would have the command read, and force-unlock
// delete in, another database or the seed itself. So is a URL that names no
// host (redis://, redis://:6379), or whose "//" is missing (redis:10.0.0.5:6379 parses as a scheme and
// an opaque part): rueidis would dial localhost:6379 for it. u has parsed
// already.
func checkURLParams(u string) error {
	pu, err := url.Parse(u)
	if err != nil {
		return nil // rueidis parsed it: its own checks stand
	}
	if pu.Scheme != "unix" && pu.Hostname() == "" {
		// Also with a port (redis://:6379, an unset $HOST before it):
		// rueidis dials localhost at that port.
		return failf(exitUsage, "the URL names no host (rueidis would dial localhost): write %s://HOST:PORT", pu.Scheme)
	}
	q, err := url.ParseQuery(pu.RawQuery)
	if err != nil {
		// rueidis drops a pair that does not parse, the parameter with it
		// (?db=1;client_name=x reads database 0).
		return failf(exitUsage, "the URL's query does not parse (%v): separate parameters with & and percent-encode %% in values", err)
	}
	for _, a := range q["addr"] {
		// rueidis dials a seed as given: ":6379" (an unset $HOST2 in
		// ?addr=$HOST2:6379) reaches the local Redis.
		if host, _, err := net.SplitHostPort(a); err == nil && host == "" {
			return failf(exitUsage, "the URL's ?addr=%s names no host (it would dial the local Redis): write ?addr=HOST:PORT", a)
		}
	}
	var unknown []string
	for k := range q {
		if !slices.Contains(urlParams, k) {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return failf(exitUsage, "the URL's query parameter %s is not one rueidis reads (%s)", strings.Join(unknown, ", "), strings.Join(urlParams, ", "))
}

// defaultURLHint says how to name another Redis when the connection to the
// default URL, given neither with --url nor in $SCRIPTLOCK_URL, failed.
func defaultURLHint(fs *flag.FlagSet, err error) string {
	if os.Getenv("SCRIPTLOCK_URL") != "" {
		return ""
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "url" })
	var ne net.Error
	if given || !errors.As(err, &ne) {
		return ""
	}
	return fmt.Sprintf(" (%s is the default: name your Redis with --url or $SCRIPTLOCK_URL)", redactURL(defaultURL))
}

// sentinelAuth is what the sentinels of a Sentinel deployment require.
type sentinelAuth struct{ user, password string }

// authHint says where each password goes when a Sentinel URL's connection
// was refused for want of one: the error does not say whether a sentinel or
// the primary refused it.
func authHint(u string, err error) string {
	msg := err.Error()
	if !strings.Contains(u, "master_set=") || !strings.Contains(msg, "NOAUTH") && !strings.Contains(msg, "WRONGPASS") {
		return ""
	}
	return " (the sentinels take --sentinel-user and --sentinel-password; the URL's user and password go to the primary)"
}

// redactURL hides a password in error messages.
func redactURL(u string) string {
	at := strings.LastIndexByte(u, '@')
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return u
	}
	cred := u[scheme+3 : at]
	if i := strings.IndexByte(cred, ':'); i >= 0 {
		cred = cred[:i] + ":xxxxx"
	}
	return u[:scheme+3] + cred + u[at:]
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// bounded is ctx limited to one round trip's timeout.
func (e *env) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.timeout)
}
