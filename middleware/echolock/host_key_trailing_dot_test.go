package echolock_test

import "testing"

// TestHostHeaderKeyTrailingDot: "shop-a.example." is the fully qualified
// spelling of shop-a.example (RFC 1034, 3.1), which reaches the same server
// (curl https://shop-a.example./ sends it) and which servers in front, as
// nginx, take for the same host: it waits for shop-a.example's lock.
func TestHostHeaderKeyTrailingDot(t *testing.T) {
	t.Parallel()
	checkHostSpellings(t, []string{"shop-a.example", "shop-a.example:8080"}, "host and port are",
		[]string{"shop-a.example.", "SHOP-A.example.:443", "shop-a.example.:8080"},
		[]string{"shop-a.example..", "shop-b.example.", "shop-a.example.:8443"})
}
