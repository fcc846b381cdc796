// Options at the levels they belong to: this program compiles.
package main

import (
	"log/slog"
	"time"

	"github.com/scriptlock/scriptlock"
)

func main() {
	c, _ := scriptlock.New(nil, scriptlock.WithLogger(slog.Default()), scriptlock.WithLease(time.Second))
	_, _ = c.Mutex("a", scriptlock.WithLease(time.Second), scriptlock.WithFailoverGuard(false, 0))
	_, _ = scriptlock.NewRedLock("a", nil, scriptlock.WithLease(time.Second), scriptlock.WithNodeTimeout(time.Millisecond))
	_, _ = scriptlock.NewMultiLock(nil, scriptlock.WithMemberWait(time.Second))
}
