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
	checkURLsRefusedForHost(t, []string{
		"redis:10.0.0.5:6379",
		"rediss:redis.internal:6380",
		"redis://",
		"redis:///0",
		"redis://ops:secret@/0",
	})
	// An address without a scheme is told so, not sent to percent-encoding.
	if _, err := connect("10.0.0.5:6379", time.Second, nil, sentinelAuth{}); err == nil || !strings.Contains(err.Error(), "no scheme") {
		t.Errorf("10.0.0.5:6379: %v, want a message saying it has no scheme", err)
	}
	checkURLsAccepted(t, "redis://127.0.0.1:6380", "rediss://h:1/2?addr=h2:3", "unix:///run/redis.sock")
}

// checkURLsRefusedForHost checks that each URL is refused with exitUsage and
// a message naming the missing host, one that does not show the password.
func checkURLsRefusedForHost(t *testing.T, urls []string) {
	t.Helper()
	for _, u := range urls {
		err := checkURLParams(u)
		var xe *exitError
		if !errors.As(err, &xe) || xe.code != exitUsage || !strings.Contains(err.Error(), "host") {
			t.Errorf("%s: %v, want exit %d naming the missing host", u, err, exitUsage)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the message shows the password: %v", u, err)
		}
	}
}

// checkURLsAccepted checks that each URL is accepted.
func checkURLsAccepted(t *testing.T, urls ...string) {
	t.Helper()
	for _, u := range urls {
		if err := checkURLParams(u); err != nil {
			t.Errorf("%s: %v, want accepted", u, err)
		}
	}
}
