package main

import "testing"

// A URL whose host is empty but that gives a port (redis://$HOST:6379 with
// $HOST unset) names no host either: rueidis dials localhost for it, so a
// force-unlock meant for another server would delete in the local one.
func TestURLWithEmptyHostAndPortRefused(t *testing.T) {
	t.Parallel()
	checkURLsRefusedForHost(t, []string{
		"redis://:6379",
		"redis://ops:secret@:6379/0",
		"rediss://:6380",
	})
	checkURLsAccepted(t, "redis://localhost:6380", "redis://[::1]:6379", "redis://h")
}
