//go:build !unix

package portclaim

// Without flock the claims hold within this process only.
type claimLock struct{ port int }

func lockPort(p int) (claimLock, error) {
	inProcess.Lock()
	defer inProcess.Unlock()
	if inProcess.ports[p] {
		return claimLock{}, ErrClaimed
	}
	inProcess.ports[p] = true
	return claimLock{port: p}, nil
}

// release keeps the port from this process still: a client of the test
// that had it may still be dialing it.
func (l claimLock) release() {}
