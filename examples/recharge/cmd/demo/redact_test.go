package main

import (
	"net/url"
	"strings"
	"testing"
)

// TestRedactURL: redactURL prints no part of a user name or password,
// including a password with a raw '@', which Go's URL parser (and so
// rueidis) accepts: it takes the user info up to the last '@'.
func TestRedactURL(t *testing.T) {
	for _, tc := range []struct {
		url, want, secret string
	}{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0", ""},
		{"redis://user:pass@127.0.0.1:6379/0", "redis://***@127.0.0.1:6379/0", "pass"},
		{"redis://:pass@127.0.0.1:6379", "redis://***@127.0.0.1:6379", "pass"},
		{"redis://user:top@secret@127.0.0.1:1/0", "redis://***@127.0.0.1:1/0", "secret"},
		{"rediss://user:a@b@c@host:6380/2", "rediss://***@host:6380/2", "b@c"},
		{"redis://user:top%40secret@127.0.0.1:1/0", "redis://***@127.0.0.1:1/0", "secret"},
		{"user:pass@127.0.0.1:6379", "***@127.0.0.1:6379", "pass"},
	} {
		got := redactURL(tc.url)
		if got != tc.want {
			t.Errorf("redactURL(%q) = %q, want %q", tc.url, got, tc.want)
		}
		if tc.secret != "" && strings.Contains(got, tc.secret) {
			t.Errorf("redactURL(%q) = %q prints part of the password", tc.url, got)
		}
		// Where Go's parser finds a password, none of it is printed.
		if u, err := url.Parse(tc.url); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && strings.Contains(got, pw) {
				t.Errorf("redactURL(%q) = %q prints the password %q", tc.url, got, pw)
			}
		}
	}
}
