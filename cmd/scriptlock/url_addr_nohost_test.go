package main

import "testing"

// A seed given with ?addr= that names no host (?addr=$HOST2:6379 with
// $HOST2 unset) is refused as the URL's own host is: rueidis dials it as
// given, ":6379", which reaches the local Redis.
func TestURLAddrWithoutHostRefused(t *testing.T) {
	t.Parallel()
	checkURLsRefusedForHost(t, []string{
		"redis://10.0.0.5:6379?addr=:6379",
		"redis://ops:secret@10.0.0.5:6379?addr=10.0.0.6:6379&addr=:6380",
	})
	checkURLsAccepted(t, "redis://10.0.0.5:6379?addr=10.0.0.6:6379", "redis://h:1?addr=[::1]:6379")
}
