// Command scriptlock shows and manages scriptlock (and Redisson) locks on a
// Redis deployment: who holds a lock, since when and for how long, who waits,
// and, when a holder is gone for good, a forced release that wakes waiters.
//
//	scriptlock [flags] inspect NAME        every layout found under NAME
//	scriptlock [flags] list [--prefix P]   locks currently held (SCAN, cluster-wide)
//	scriptlock [flags] force-unlock NAME   delete a lock, wake its waiters (asks first)
//	scriptlock [flags] watch NAME          live view until interrupted
//
// Flags (before or after the command): --url (default $SCRIPTLOCK_URL, else
// redis://127.0.0.1:6379; rediss:// for TLS, user:password@ for ACL,
// ?addr=host:port for more seeds, ?master_set=NAME for Sentinel; a Cluster is
// detected), --key-prefix (the Client's WithKeyPrefix), --json (each key
// also as key_base64, its exact bytes), --name-base64 (NAME is such a
// key_base64: for keys that are not UTF-8), --timeout, --sharded (auto, on,
// off: whether force-unlock publishes on sharded pub/sub, and watch listens
// there too, as the Clients' WithShardedPubSub; auto: on a Cluster that
// supports it);
// for rediss://, --tls-ca (a private CA), --tls-cert and --tls-key (a client
// certificate) and --tls-server-name; for sentinels that require a password,
// --sentinel-password (or $SCRIPTLOCK_SENTINEL_PASSWORD) and --sentinel-user.
//
// Exit codes: 0 done; 1 Redis or connection failure; 2 bad usage or name
// (on a Cluster a name with { or } and no hash tag too; a URL query
// parameter rueidis does not read, a query that does not parse, or a URL
// that names no host, too);
// 3 nothing found (no lock under the name, nothing to unlock); 4 force-unlock
// not confirmed (or the lock changed hands before the answer or the delete); 5 force-unlock
// of something that is not a lock; 6 list left a Cluster primary unread (down,
// not answering; in this run, or in the run whose --cursor it continues): it
// lists what the others hold and names the unread ones.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
