package main

import (
	"context"
	"testing"

	"github.com/scriptlock/scriptlock"
)

// heldMutex is the Mutex called name, locked by owner.
func heldMutex(t testing.TB, ctx context.Context, c *scriptlock.Client, name, owner string) *scriptlock.Mutex {
	t.Helper()
	m := mustMutex(t, c, name)
	if _, err := m.Lock(scriptlock.WithOwner(ctx, owner)); err != nil {
		t.Fatalf("Lock %q as %q: %v", name, owner, err)
	}
	return m
}

// Handle constructors for tests: an error is a test failure.

func mustMutex(t testing.TB, c *scriptlock.Client, name string, opts ...scriptlock.LockOption) *scriptlock.Mutex {
	t.Helper()
	m, err := c.Mutex(name, opts...)
	if err != nil {
		t.Fatalf("Mutex(%q): %v", name, err)
	}
	return m
}

func mustFair(t testing.TB, c *scriptlock.Client, name string, opts ...scriptlock.LockOption) *scriptlock.FairMutex {
	t.Helper()
	f, err := c.FairMutex(name, opts...)
	if err != nil {
		t.Fatalf("FairMutex(%q): %v", name, err)
	}
	return f
}

func mustRW(t testing.TB, c *scriptlock.Client, name string, opts ...scriptlock.LockOption) *scriptlock.RWMutex {
	t.Helper()
	rw, err := c.RWMutex(name, opts...)
	if err != nil {
		t.Fatalf("RWMutex(%q): %v", name, err)
	}
	return rw
}

func mustSem(t testing.TB, c *scriptlock.Client, name string, opts ...scriptlock.LockOption) *scriptlock.Semaphore {
	t.Helper()
	s, err := c.Semaphore(name, opts...)
	if err != nil {
		t.Fatalf("Semaphore(%q): %v", name, err)
	}
	return s
}

func mustPermits(t testing.TB, c *scriptlock.Client, name string, opts ...scriptlock.LockOption) *scriptlock.PermitSemaphore {
	t.Helper()
	s, err := c.PermitSemaphore(name, opts...)
	if err != nil {
		t.Fatalf("PermitSemaphore(%q): %v", name, err)
	}
	return s
}

func mustLatch(t testing.TB, c *scriptlock.Client, name string, opts ...scriptlock.LockOption) *scriptlock.CountDownLatch {
	t.Helper()
	l, err := c.CountDownLatch(name, opts...)
	if err != nil {
		t.Fatalf("CountDownLatch(%q): %v", name, err)
	}
	return l
}
