// A Client-wide option given to a lock handle: this program must not compile.
package main

import (
	"log/slog"

	"github.com/scriptlock/scriptlock"
)

func main() {
	var c *scriptlock.Client
	_, _ = c.Mutex("a", scriptlock.WithLogger(slog.Default()))
}
