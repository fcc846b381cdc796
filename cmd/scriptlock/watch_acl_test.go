package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An ACL user that may read the lock but not listen on its channels (Redis 7
// gives a new user no channel) would leave watch blind to release messages:
// watch says its subscription was refused and exits 1, on a single node and
// on a Cluster with sharded pub/sub.
func TestWatchSubscriptionRefused(t *testing.T) {
	t.Parallel()
	user := redistest.WithArgs("--user", "ops", "on", ">s3cret", "~*", "+@all") // no &: no channel
	node := redistest.Server(t, user)
	cl := redistest.Cluster(t, 3, user)
	for _, d := range []struct{ name, url string }{
		{"single", "redis://ops:s3cret@" + node.Addr},
		{"cluster", "redis://ops:s3cret@" + cl.Addrs[0] + "?addr=" + cl.Addrs[1]},
	} {
		t.Run(d.name, func(t *testing.T) {
			r, exited := watchExit(t, deployment{url: d.url}, 10*time.Second, nil, "order:1")
			if !exited {
				t.Errorf("watch still running 10s after its subscriptions were refused (exit %d on interrupt)\nstdout: %s\nstderr: %s", r.code, r.out, r.errOut)
			} else if r.code != exitFailure || !strings.Contains(r.errOut, "NOPERM") || !strings.Contains(strings.ToLower(r.errOut), "subscribe refused") {
				t.Errorf("watch: exit %d, want %d with the refused subscription named\n%s%s", r.code, exitFailure, r.out, r.errOut)
			}
		})
	}
}
