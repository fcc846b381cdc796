// A RedLock option given to a Mutex: this program must not compile.
package main

import (
	"time"

	"github.com/scriptlock/scriptlock"
)

func main() {
	var c *scriptlock.Client
	_, _ = c.Mutex("a", scriptlock.WithNodeTimeout(time.Second))
}
