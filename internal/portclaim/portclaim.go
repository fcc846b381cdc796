// Package portclaim hands out loopback ports for the servers and proxies
// tests start, and keeps each one from every other test process of the
// module until its owner lets it go. The kernel only keeps a port from
// others while a socket listens on it: a server a test killed, and expects
// to refuse connections, leaves its port to the next listener, perhaps
// another package's redis-server, which would then answer in its place.
package portclaim

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
)

// Claim is a port held for its owner until Release.
type Claim struct {
	Port int
	once sync.Once
	lock claimLock
}

// Release lets the port go; later calls do nothing.
func (c *Claim) Release() {
	if c == nil {
		return
	}
	c.once.Do(c.lock.release)
}

// Free asks the kernel for a free loopback port that no test process has
// claimed, and claims it.
func Free() (*Claim, error) {
	for range 200 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		c, err := Take(p)
		if errors.Is(err, ErrClaimed) || p == 6379 || p == 16379 || p == 5432 {
			c.Release()
			continue
		}
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, errors.New("free port: no unclaimed loopback port found")
}

// ErrClaimed: another claim holds the port.
var ErrClaimed = errors.New("port claimed by another test")

// Take claims port p, a port already bound (a listener's), failing with
// ErrClaimed when another claim holds it.
func Take(p int) (*Claim, error) {
	l, err := lockPort(p)
	if err != nil {
		return nil, err
	}
	return &Claim{Port: p, lock: l}, nil
}

// dir holds one file per port ever claimed on this machine by this user;
// the claims are locks on them, which the kernel drops when their process
// exits.
func dir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("scriptlock-test-ports-%d", os.Getuid()))
}

// inProcess holds every port claimed in this process, released or not:
// none is handed out twice here, and where there is no flock this is the
// only check.
var inProcess = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}
