//go:build unix

package portclaim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

type claimLock struct {
	f    *os.File
	port int
}

func lockPort(p int) (claimLock, error) {
	inProcess.Lock()
	defer inProcess.Unlock()
	if inProcess.ports[p] {
		return claimLock{}, ErrClaimed
	}
	if err := os.MkdirAll(dir(), 0o700); err != nil {
		return claimLock{}, fmt.Errorf("port claim: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir(), strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return claimLock{}, fmt.Errorf("port claim: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return claimLock{}, ErrClaimed
		}
		return claimLock{}, fmt.Errorf("port claim: flock: %w", err)
	}
	inProcess.ports[p] = true
	return claimLock{f: f, port: p}, nil
}

func (l claimLock) release() {
	if l.f == nil {
		return
	}
	// The lock goes; the file stays, for the next claim of the port. This
	// process never takes the port again: a client of the test that had it
	// may still be dialing it.
	l.f.Close()
}
