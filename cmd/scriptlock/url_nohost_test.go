package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A redis:// URL that names no host, or whose "//" is missing
// (redis:10.0.0.5:6379 reads as a scheme and an opaque part), is refused
// before anything is dialled: rueidis dialled localhost:6379 for it, so a
// force-unlock meant for another server deleted in the local one.
func TestURLWithoutHostRefused(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"redis:10.0.0.5:6379",
		"rediss:redis.internal:6380",
		"redis://",
		"redis:///0",
		"redis://ops:secret@/0",
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
	// An address without a scheme is told so, not sent to percent-encoding.
	if _, err := connect("10.0.0.5:6379", time.Second, nil, sentinelAuth{}); err == nil || !strings.Contains(err.Error(), "no scheme") {
		t.Errorf("10.0.0.5:6379: %v, want a message saying it has no scheme", err)
	}
	for _, u := range []string{"redis://127.0.0.1:6380", "rediss://h:1/2?addr=h2:3", "unix:///run/redis.sock"} {
		if err := checkURLParams(u); err != nil {
			t.Errorf("%s: %v, want accepted", u, err)
		}
	}
}
