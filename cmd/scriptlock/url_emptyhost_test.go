package main

import (
	"errors"
	"strings"
	"testing"
)

// A URL whose host is empty but that gives a port (redis://$HOST:6379 with
// $HOST unset) names no host either: rueidis dials localhost for it, so a
// force-unlock meant for another server would delete in the local one.
func TestURLWithEmptyHostAndPortRefused(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"redis://:6379",
		"redis://ops:secret@:6379/0",
		"rediss://:6380",
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
	for _, u := range []string{"redis://localhost:6380", "redis://[::1]:6379", "redis://h"} {
		if err := checkURLParams(u); err != nil {
			t.Errorf("%s: %v, want accepted", u, err)
		}
	}
}
