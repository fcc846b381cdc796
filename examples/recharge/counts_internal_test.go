package recharge

import "testing"

// TestCountsSnapshotWhileSettling: Counts is one snapshot. A payment that
// a recharge settles from Unconfirmed to Credited while Counts reads them
// is counted in one of the two, never in both nor in neither, so that
// Credited + Unconfirmed never says more or fewer credits than were made.
func TestCountsSnapshotWhileSettling(t *testing.T) {
	t.Parallel()
	const n = 20000
	s := &Service{unconfirmed: make(map[int64]Payment, n)}
	for order := int64(1); order <= n; order++ {
		s.unconfirmed[order] = Payment{OrderID: order, Fence: order} // this service's token for it
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for order := int64(1); order <= n; order++ {
			s.settle(order, Payment{OrderID: order, Fence: order}) // the payment recorded is this service's
		}
	}()
	for {
		select {
		case <-done:
			if c := s.Counts(); c.Credited != n || c.Unconfirmed != 0 {
				t.Fatalf("counts %+v once all were settled; want %d credited", c, n)
			}
			return
		default:
		}
		if c := s.Counts(); c.Credited+c.Unconfirmed != n {
			t.Fatalf("counts %+v while payments were settled: %d credits made or unconfirmed; want %d", c, c.Credited+c.Unconfirmed, n)
		}
	}
}
