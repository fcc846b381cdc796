package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/layout"
)

// afterScanPage holds, for a list prefix (--key-prefix and --prefix), a
// function list runs after each SCAN page, with the node's index and the
// cursor SCAN returned. Only tests set one.
var afterScanPage sync.Map // prefix string -> func(node int, cursor uint64)

// scanCount is the COUNT hint of each SCAN call: how many keys a node looks
// at per round trip, which bounds the server-side work of one call.
const scanCount = 1000

func listFlags(fs *flag.FlagSet, e *env) {
	fs.StringVar(&e.prefix, "prefix", "", "only keys starting with this (after --key-prefix)")
	fs.IntVar(&e.limit, "limit", e.limit, "stop once this many locks are listed (a SCAN page is never split); the printed cursor continues")
	fs.StringVar(&e.cursor, "cursor", "", "continue a listing from the cursor an earlier one printed")
	fs.IntVar(&e.maxScans, "max-scans", 1000, "stop after this many SCAN round trips; the printed cursor continues")
}

// listing is list's result: the locks found and where to continue.
type listing struct {
	Locks []*Report `json:"locks"`
	// Cursor continues the listing ("" when every node was scanned to the end).
	Cursor string `json:"cursor"`
	// Unread names the primaries that could not be read: their locks are
	// missing from Locks.
	Unread []unreadNode `json:"unread,omitempty"`
	// read is whether this run read any primary: a run that read none
	// (its cursor's primaries all unread too) is no partial answer, unless
	// it stopped (--max-scans) with primaries left that its cursor reads.
	read bool
}

// unreadNode is a primary list could not read, and why.
type unreadNode struct {
	Node  string `json:"node"`
	Error string `json:"error"`
	// partly: pages of it were read before it failed, and their locks
	// listed.
	partly bool
}

// scanCursor is a position in a cluster-wide scan: the index of a primary in
// address order, the SCAN cursor on it, and the fingerprint of the primaries
// it was printed for. Written "node:cursor:primaries". A SCAN cursor is a
// position on one server only, and the index names a primary only among the
// same ones: after a failover, or a primary added or removed, the cursor is
// refused rather than resumed on another server, which would skip or repeat
// locks. A listing that left primaries unread writes them too, by index
// (":UNREAD", comma-separated): the runs that continue it name them unread,
// and the last one does not end the listing as if it were complete.
type scanCursor struct {
	node      int
	cursor    uint64
	primaries string
	unread    []int
}

func parseCursor(s string) (scanCursor, error) {
	if s == "" {
		return scanCursor{}, nil
	}
	parts := strings.Split(s, ":")
	bad := failf(exitUsage, "bad --cursor %q: want NODE:CURSOR:PRIMARIES[:UNREAD] as printed by list", s)
	if (len(parts) != 3 && len(parts) != 4) || len(parts[2]) != fingerprintLen {
		return scanCursor{}, bad
	}
	node, err1 := strconv.Atoi(parts[0])
	cur, err2 := strconv.ParseUint(parts[1], 10, 64)
	_, err3 := hex.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || node < 0 {
		return scanCursor{}, bad
	}
	c := scanCursor{node: node, cursor: cur, primaries: parts[2]}
	if len(parts) == 4 {
		for _, f := range strings.Split(parts[3], ",") {
			// An unread primary comes before the one the cursor is on,
			// each once, in order, as list writes them.
			i, err := strconv.Atoi(f)
			if err != nil || i < 0 || i >= node || (len(c.unread) > 0 && i <= c.unread[len(c.unread)-1]) {
				return scanCursor{}, bad
			}
			c.unread = append(c.unread, i)
		}
	}
	return c, nil
}

func (c scanCursor) String() string {
	s := strconv.Itoa(c.node) + ":" + strconv.FormatUint(c.cursor, 10) + ":" + c.primaries
	for i, u := range c.unread {
		if i == 0 {
			s += ":"
		} else {
			s += ","
		}
		s += strconv.Itoa(u)
	}
	return s
}

// fingerprintLen is the length of a cursor's primaries fingerprint: 8 hex
// digits, short enough to copy, enough to tell two sets of primaries apart.
const fingerprintLen = 8

// fingerprint names a listing, as a cursor writes it: its primaries, given
// in address order, and the key prefix it matches (--key-prefix and
// --prefix, after the database when that is not 0). A SCAN position does not depend on MATCH, so a cursor taken to
// another prefix would skip that prefix's keys in the buckets already read.
func fingerprint(addrs []string, match string) string {
	h := sha256.Sum256([]byte(strings.Join(addrs, ",") + "\x00" + match))
	return hex.EncodeToString(h[:fingerprintLen/2])
}

// primary is a node list scans. down, when set, is why it could not be
// asked its role: a Cluster primary that does not answer, listed as unread.
type primary struct {
	addr string
	c    rueidis.Client
	down error
}

// primaries returns the primary nodes in address order: SCAN on every one
// covers a Cluster's whole keyspace; replicas would only repeat it. With no
// primary among the nodes (a replica's address), it returns them all. A
// Cluster node that does not answer ROLE is kept, marked down, when CLUSTER
// SLOTS names it a primary: its locks go unlisted, and list says so.
func primaries(ctx context.Context, e *env) ([]primary, error) {
	nodes, err := clusterNodes(ctx, e)
	if err != nil {
		return nil, err
	}
	addrs := make([]string, 0, len(nodes))
	for a := range nodes {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	var out []primary
	// slotOwners, read once ROLE is refused or unanswered, are the
	// Cluster's primaries.
	var slotOwners map[string]bool
	for _, a := range addrs {
		n := nodes[a]
		bctx, cancel := e.bounded(ctx)
		role, err := n.Do(bctx, n.B().Role().Build()).ToArray()
		cancel()
		_, refused := rueidis.IsRedisErr(err)
		refused = refused && !unavailable(err)
		var down error
		switch {
		case refused && len(nodes) == 1:
			// ROLE is @admin and @dangerous, which an operator's ACL user
			// often lacks: a lone node is listed whatever its role.
			role, err = nil, nil
		case err != nil && (refused || (len(nodes) > 1 && ctx.Err() == nil)):
			if slotOwners == nil {
				// Not asked again when it did not answer: a hung node
				// would cost another --timeout.
				skip := a
				if refused {
					skip = ""
				}
				// err stays ROLE's: it is why this node goes unread.
				var serr error
				if slotOwners, serr = clusterPrimaries(ctx, e, nodes, addrs, skip); serr != nil {
					return nil, serr
				}
			}
			if !slotOwners[a] {
				// A replica: refused, or down, which costs no lock.
				continue
			}
			if !refused {
				down = fmt.Errorf("ROLE: %w", err)
			}
			role, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("ROLE on %s: %w", a, err)
		}
		if len(role) > 0 {
			if r, _ := role[0].ToString(); r != "master" {
				continue
			}
		}
		out = append(out, primary{addr: a, c: n, down: down})
	}
	if len(out) == 0 {
		// Pointed at a replica alone (a read-only look away from the
		// primary): its copy of the keyspace is what there is to list.
		for _, a := range addrs {
			out = append(out, primary{addr: a, c: nodes[a]})
		}
	}
	return out, nil
}

// clusterNodes is the client's nodes. A Cluster client can connect knowing
// none: rueidis reads the layout again, at a random moment, when a seed
// refuses the dial, and a read made before any other seed answered finds
// no node to ask and leaves no slot served; a node with no slot assigned
// (a Cluster being set up) names none either. Listing no primary would
// answer that nothing is held: a keyed call has rueidis, knowing no node
// for its slot, read the layout again; still none is a failure.
func clusterNodes(ctx context.Context, e *env) (map[string]rueidis.Client, error) {
	nodes := e.rc.Nodes()
	if len(nodes) > 0 || e.rc.Mode() != rueidis.ClientModeCluster {
		return nodes, nil
	}
	bctx, cancel := e.bounded(ctx)
	// Its reply does not matter (NOPERM from an ACL user is as good): the
	// client reads the layout before it sends.
	err := e.rc.Do(bctx, e.rc.B().Exists().Key(e.keyPrefix+e.prefix).Build()).Error()
	cancel()
	if nodes = e.rc.Nodes(); len(nodes) > 0 {
		return nodes, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("the Cluster names no node that serves slots (a Cluster whose slots are not yet assigned, or whose seeds did not answer CLUSTER SLOTS): no primary to list: %w", err)
}

// clusterPrimaries are the addresses of the nodes that serve slots, as
// CLUSTER SLOTS names them (the client's own node addresses come from it):
// every Cluster user may ask it. It asks each node but skip in turn until one
// answers: a node may be down.
func clusterPrimaries(ctx context.Context, e *env, nodes map[string]rueidis.Client, addrs []string, skip string) (map[string]bool, error) {
	var ranges []rueidis.RedisMessage
	var asked string
	err := errors.New("no other node to ask")
	for _, a := range addrs {
		if a == skip {
			continue
		}
		n := nodes[a]
		bctx, cancel := e.bounded(ctx)
		ranges, err = n.Do(bctx, n.B().ClusterSlots().Build()).ToArray()
		cancel()
		if err == nil {
			asked = a
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("ROLE failed, CLUSTER SLOTS: %w", err)
	}
	owners := map[string]bool{}
	for _, r := range ranges {
		v, _ := r.ToArray()
		if len(v) < 3 {
			continue
		}
		node, _ := v[2].ToArray()
		if len(node) < 2 {
			continue
		}
		// Read as rueidis reads it, so that the addresses are the client's:
		// no host (empty, or null under cluster-preferred-endpoint-type
		// unknown-endpoint) is the host of the node asked, "?" (no hostname
		// announced) a node the client does not reach.
		host, _ := node[0].ToString()
		switch host {
		case "":
			host, _, _ = net.SplitHostPort(asked)
		case "?":
			continue
		}
		port, _ := node[1].AsInt64()
		owners[net.JoinHostPort(host, strconv.FormatInt(port, 10))] = true
	}
	return owners, nil
}

func listCheck(e *env) error {
	if e.limit <= 0 || e.maxScans <= 0 {
		return failf(exitUsage, "--limit and --max-scans must be positive")
	}
	_, err := parseCursor(e.cursor)
	return err
}

func listCmd(ctx context.Context, e *env, _ []string) error {
	cur, err := parseCursor(e.cursor)
	if err != nil {
		return err
	}
	l, err := list(ctx, e, e.keyPrefix+e.prefix, cur)
	if err != nil {
		return err
	}
	if e.json {
		if err := writeJSON(e.out, l); err != nil {
			return err
		}
		return l.partial()
	}
	tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tLAYOUT\tHOLDERS\tHOLDS\tLEASE\tQUEUED\tFENCE")
	for _, r := range l.Locks {
		holds := int64(0)
		for _, h := range r.Holders {
			holds += h.Holds
		}
		fence := "-"
		if r.Fence != nil {
			fence = strconv.FormatInt(*r.Fence, 10)
		}
		kind := r.Kind
		if r.Mode != "" {
			kind += "/" + r.Mode
		}
		// QUEUED counts every live waiter the lock knows of: a fair queue,
		// pending writers (entries whose deadline passed are no waiters), a
		// Mutex's registered Go waiters (Redisson's own waiters register
		// nowhere).
		// Inspect reads at most --limit holders of a lock: with more, their
		// holds are a lower bound.
		holdsCol := strconv.FormatInt(holds, 10)
		if int64(len(r.Holders)) < r.HolderCount {
			holdsCol += "+"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%s\n", shown(strings.TrimPrefix(r.Key, e.keyPrefix)), kind, r.HolderCount, holdsCol,
			lease(r.LeaseMS), r.QueueLength+r.WriterCount+r.MutexWaiterCount, fence)
	}
	tw.Flush()
	if l.Cursor != "" {
		// The command that lists the next keys of the same listing.
		fmt.Fprintf(e.out, "\nmore: scriptlock list --cursor %s", l.Cursor)
		if e.keyPrefix != "" {
			fmt.Fprintf(e.out, " --key-prefix %s", shellQuote(e.keyPrefix))
		}
		if e.prefix != "" {
			fmt.Fprintf(e.out, " --prefix %s", shellQuote(e.prefix))
		}
		fmt.Fprintln(e.out)
	}
	return l.partial()
}

// shellQuote quotes s for a POSIX shell. A string that is not UTF-8 or holds
// a character that is not printable (a prefix is any bytes) takes the $'...'
// form (bash, zsh, ksh, POSIX.1-2024), its other bytes as \xNN: printed raw
// they would reach the terminal as garbage or an escape sequence, and a copy
// of the line would not give them back.
func shellQuote(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) < 0 {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r != utf8.RuneError && strconv.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}

// list scans every primary for keys under prefix, from cur on, and inspects
// each (a lock is a hash, or a string for a LeanMutex); keys that are not
// lock-shaped are skipped. It stops after
// e.limit locks or e.maxScans SCAN calls and returns where to continue.
func list(ctx context.Context, e *env, prefix string, cur scanCursor) (*listing, error) {
	nodes, err := primaries(ctx, e)
	if err != nil {
		return nil, err
	}
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.addr
	}
	scope := prefix
	if e.db != 0 {
		// Another database's keys: a SCAN position there skips as much.
		scope = "db " + strconv.Itoa(e.db) + "\x00" + prefix
	}
	fp := fingerprint(addrs, scope)
	if cur.primaries != "" && cur.primaries != fp {
		return nil, failf(exitUsage, "cursor %s was printed for another listing: another --prefix or --key-prefix than %q, another database, or other primaries than there are now (%s): a failover, or a primary added or removed, since then; its SCAN position belongs to a server it no longer names, or skips keys of this prefix: list again without --cursor",
			cur, prefix, strings.Join(addrs, ", "))
	}
	cur.primaries = fp
	if cur.node >= len(nodes) {
		// No listing prints one: it names no primary, and scanning none would
		// answer that nothing is held.
		return nil, failf(exitUsage, "cursor node %d: there are %d primaries, numbered from 0", cur.node, len(nodes))
	}
	l := &listing{Locks: []*Report{}}
	// The primaries an earlier run of this listing could not read: their
	// locks are missing from the listing as a whole, which this run says
	// too, and passes on in its cursor.
	skipped := cur.unread
	for _, i := range skipped {
		l.Unread = append(l.Unread, unreadNode{Node: addrs[i], Error: "not read by an earlier run of this listing (--cursor)"})
	}
	match := layout.GlobEscape(prefix) + "*"
	scans := 0
	// SCAN may return a key twice (a rehash, a slot that moved to a node
	// scanned later): a lock is listed once per run. Only the keys listed
	// are kept: a key that is no lock, met again, is read again, while
	// keeping every key scanned would hold up to --max-scans pages of them.
	listed := map[string]bool{}
	// unread names the primary at cur unread; after pages of it were read
	// (by this run, or the one that printed a cursor within it) the locks
	// on those are listed, which the message says.
	unread := func(why string) {
		if cur.cursor != 0 {
			why += "; its locks on the SCAN pages read before are listed"
		}
		l.Unread = append(l.Unread, unreadNode{Node: nodes[cur.node].addr, Error: why, partly: cur.cursor != 0})
		skipped = append(skipped, cur.node)
		cur = scanCursor{node: cur.node + 1, primaries: fp}
	}
	for cur.node < len(nodes) {
		if scans >= e.maxScans || len(l.Locks) >= e.limit {
			cur.unread = skipped
			l.Cursor = cur.String()
			return l, nil
		}
		n := nodes[cur.node]
		if n.down != nil {
			// Within its SCAN (a cursor's), pages of it were listed.
			unread(n.down.Error())
			continue
		}
		bctx, cancel := e.bounded(ctx)
		page, err := n.c.Do(bctx, n.c.B().Scan().Cursor(cur.cursor).Match(match).Count(scanCount).Build()).AsScanEntry()
		cancel()
		scans++
		if _, refused := rueidis.IsRedisErr(err); err != nil && (!refused || unavailable(err)) && len(nodes) > 1 && ctx.Err() == nil {
			// The primary went away during the listing, or serves no
			// command for now: the others are still listed.
			unread(fmt.Sprintf("SCAN: %v", err))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("SCAN on %s: %w", n.addr, err)
		}
		if hook, ok := afterScanPage.Load(prefix); ok {
			hook.(func(int, uint64))(cur.node, page.Cursor)
		}
		keys := page.Elements[:0:0]
		for _, k := range page.Elements {
			if !listed[k] {
				keys = append(keys, k)
			}
		}
		reports, err := inspectAll(ctx, e, keys)
		if na := (noAnswer{}); errors.As(err, &na) && len(nodes) > 1 && ctx.Err() == nil {
			// The primary went away between its SCAN and the reads of
			// the keys it gave: as if its SCAN had failed.
			unread(err.Error())
			continue
		}
		if err != nil {
			return nil, err
		}
		l.read = true
		for _, r := range reports {
			// Not released meanwhile, not a key of another kind, not
			// listed already (a page may repeat a key too).
			if r.IsLock() && r.RedisType != "none" && !listed[r.Key] {
				listed[r.Key] = true
				l.Locks = append(l.Locks, r)
			}
		}
		if page.Cursor == 0 {
			cur = scanCursor{node: cur.node + 1, primaries: fp}
		} else {
			cur.cursor = page.Cursor
		}
	}
	return l, nil
}

// partial is list's error when some primaries could not be read: the
// listing printed is what the others hold.
func (l *listing) partial() error {
	if len(l.Unread) == 0 {
		return nil
	}
	var b strings.Builder
	missing := "the locks it holds are not listed"
	for i, u := range l.Unread {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s)", u.Node, u.Error)
		if u.partly {
			missing = "not all the locks it holds are listed"
		}
	}
	if !l.read && l.Cursor == "" {
		return fmt.Errorf("could not read any primary: %s", b.String())
	}
	return failf(exitPartial, "partial listing: could not read primary %s; %s", b.String(), missing)
}

// noAnswer is a round trip the server did not answer (down, unreachable, not
// within --timeout) or refused as it refuses every command for now
// (unavailable), told apart from its other replies, a refusal included, and
// from a reply list cannot read: list goes on without that primary.
type noAnswer struct{ error }

func (e noAnswer) Unwrap() error { return e.error }

// unanswered returns err, marked noAnswer when cause, the round trip's own
// error, is no reply from the server, or one that it answers every command
// for now (unavailable).
func unanswered(cause, err error) error {
	if re := (*rueidis.RedisError)(nil); errors.As(cause, &re) && !unavailable(cause) {
		return err
	}
	return noAnswer{err}
}

// unavailable reports a server's reply that it serves no command for now,
// whatever the command and the user: BUSY (running a script or function past
// busy-reply-threshold) and LOADING (reading its dataset at startup). Such a
// primary is as unread as one that does not answer at all.
func unavailable(err error) bool {
	re := (*rueidis.RedisError)(nil)
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	return strings.HasPrefix(msg, "BUSY ") || strings.HasPrefix(msg, "LOADING ")
}

// isAuxiliary reports keys that belong to a lock but are not one (its
// fencing counter, queue, call records, read leases: see layout.Companion),
// and names inspect would refuse: on a Cluster a key with '{' or '}' and no
// hash tag too, whose companions lie in other slots.
func isAuxiliary(rc rueidis.Client, key string) bool {
	return checkName(key) != nil || checkDeployment(rc, key) != nil
}

// inspectAll inspects the keys of one SCAN page in one pipelined round trip
// (per node on a Cluster).
func inspectAll(ctx context.Context, e *env, keys []string) ([]*Report, error) {
	var calls []generated.InspectArgs
	var names []string
	for _, key := range keys {
		if isAuxiliary(e.rc, key) {
			continue
		}
		k := layout.For(key, e.rc.Mode() == rueidis.ClientModeCluster)
		calls = append(calls, generated.InspectArgs{Lock: k.Lock, Fence: k.Fence, Queue: k.Queue, Timeouts: k.Timeouts,
			Writers: k.Writers, Permits: k.Permits, Rwprefix: k.RWPrefix, Fqueue: k.FairQueue, Ftimeouts: k.FairTimeouts,
			Lwaiters: k.LockWaiters, Limit: scriptLimit(e.limit), LeaseKeys: readLeaseKeys})
		names = append(names, key)
	}
	if len(calls) == 0 {
		return nil, nil
	}
	bctx, cancel := e.bounded(ctx)
	defer cancel()
	out := make([]*Report, 0, len(calls))
	for i, rep := range generated.InspectMulti(bctx, e.rc, calls) {
		if rep.Err != nil {
			return nil, unanswered(rep.Err, fmt.Errorf("inspect %q: %w%s", names[i], rep.Err, scriptACLHint(rep.Err, names[i], e.rc.Mode() == rueidis.ClientModeCluster)))
		}
		r, err := decodeReport(names[i], rep.Value)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := readLeases(ctx, e, out); err != nil {
		return nil, err
	}
	return out, nil
}
