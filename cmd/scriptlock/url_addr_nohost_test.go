package main

import (
	"errors"
	"strings"
	"testing"
)

// A seed given with ?addr= that names no host (?addr=$HOST2:6379 with
// $HOST2 unset) is refused as the URL's own host is: rueidis dials it as
// given, ":6379", which reaches the local Redis.
func TestURLAddrWithoutHostRefused(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"redis://10.0.0.5:6379?addr=:6379",
		"redis://ops:secret@10.0.0.5:6379?addr=10.0.0.6:6379&addr=:6380",
	} {
		err := checkURLParams(u)
		var xe *exitError
		if !errors.As(err, &xe) || xe.code != exitUsage || !strings.Contains(err.Error(), "host") {
			t.Errorf("%s: %v, want exit %d naming the missing host", u, err, exitUsage)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the message shows the password: %v", u, err)
		}
	}
	for _, u := range []string{"redis://10.0.0.5:6379?addr=10.0.0.6:6379", "redis://h:1?addr=[::1]:6379"} {
		if err := checkURLParams(u); err != nil {
			t.Errorf("%s: %v, want accepted", u, err)
		}
	}
}
