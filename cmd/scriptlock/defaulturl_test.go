package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A connection refused at the built-in default URL (no --url, no
// $SCRIPTLOCK_URL) says how to point the command at another Redis; one
// refused at a URL the user gave does not repeat it.
func TestDefaultURLRefusedSaysWhereToPoint(t *testing.T) {
	old := defaultURL
	defaultURL = "redis://127.0.0.1:1" // nothing listens on port 1
	t.Cleanup(func() { defaultURL = old })
	t.Setenv("SCRIPTLOCK_URL", "")

	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"list"}, strings.NewReader(""), &out, &errOut); code != exitFailure {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitFailure, errOut.String())
	}
	if !strings.Contains(errOut.String(), "--url") || !strings.Contains(errOut.String(), "$SCRIPTLOCK_URL") {
		t.Errorf("stderr %q does not say to give --url or $SCRIPTLOCK_URL", errOut.String())
	}

	errOut.Reset()
	if code := run(context.Background(), []string{"--url", "redis://127.0.0.1:1", "list"}, strings.NewReader(""), &out, &errOut); code != exitFailure {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitFailure, errOut.String())
	}
	if strings.Contains(errOut.String(), "$SCRIPTLOCK_URL") {
		t.Errorf("stderr %q: a hint about the default URL for a URL the user gave", errOut.String())
	}
}
