package redistest

import (
	"strconv"
	"testing"
)

// Migration is one slot being moved from one primary to another, as
// `redis-cli --cluster reshard` moves it, started by StartMigration. Until
// Finish the slot is MIGRATING on From and IMPORTING on To: a command whose
// keys are all on From runs there, one whose keys are all gone is redirected
// with ASK, and one that names keys on both sides (or some that exist and
// some that do not) gets TRYAGAIN.
type Migration struct {
	c          *ClusterT
	Slot       int64
	From, To   *Node
	fromID, to string
}

// StartMigration opens the migration of key's slot from the node serving it
// to another primary: CLUSTER SETSLOT IMPORTING on the target, then MIGRATING
// on the source, the order redis-cli uses.
func (c *ClusterT) StartMigration(t testing.TB, key string) *Migration {
	t.Helper()
	from := c.NodeFor(t, key)
	var to *Node
	for _, n := range c.Primaries(t) {
		if n != from {
			to = n
			break
		}
	}
	slot, err := from.Do(t, "CLUSTER", "KEYSLOT", key).AsInt64()
	if err != nil {
		t.Fatalf("redistest: CLUSTER KEYSLOT %s: %v", key, err)
	}
	m := &Migration{c: c, Slot: slot, From: from, To: to, fromID: nodeID(t, from), to: nodeID(t, to)}
	s := strconv.FormatInt(slot, 10)
	if err := to.Do(t, "CLUSTER", "SETSLOT", s, "IMPORTING", m.fromID).Error(); err != nil {
		t.Fatalf("redistest: SETSLOT %s IMPORTING on %s: %v", s, to.Addr, err)
	}
	if err := from.Do(t, "CLUSTER", "SETSLOT", s, "MIGRATING", m.to).Error(); err != nil {
		t.Fatalf("redistest: SETSLOT %s MIGRATING on %s: %v", s, from.Addr, err)
	}
	return m
}

// MoveKeys moves every key of the slot still on the source to the target
// with MIGRATE (each keeps its value and TTL) and returns how many it moved.
func (m *Migration) MoveKeys(t testing.TB) int {
	t.Helper()
	s := strconv.FormatInt(m.Slot, 10)
	moved := 0
	for {
		keys, err := m.From.Do(t, "CLUSTER", "GETKEYSINSLOT", s, "100").AsStrSlice()
		if err != nil {
			t.Fatalf("redistest: GETKEYSINSLOT %s on %s: %v", s, m.From.Addr, err)
		}
		if len(keys) == 0 {
			return moved
		}
		args := append([]string{"MIGRATE", "127.0.0.1", strconv.Itoa(m.To.Port), "", "0", "5000", "KEYS"}, keys...)
		if err := m.From.Do(t, args...).Error(); err != nil {
			t.Fatalf("redistest: MIGRATE of %d keys from %s to %s: %v", len(keys), m.From.Addr, m.To.Addr, err)
		}
		moved += len(keys)
	}
}

// Finish moves the remaining keys and gives the slot to the target on every
// primary (the target first, then the source, then the others), then waits
// until all nodes agree on the slot map.
func (m *Migration) Finish(t testing.TB) {
	t.Helper()
	m.MoveKeys(t)
	s := strconv.FormatInt(m.Slot, 10)
	order := []*Node{m.To, m.From}
	for _, n := range m.c.Primaries(t) { // replicas refuse SETSLOT and learn it from their primary
		if n != m.To && n != m.From {
			order = append(order, n)
		}
	}
	for _, n := range order {
		if err := n.Do(t, "CLUSTER", "SETSLOT", s, "NODE", m.to).Error(); err != nil {
			t.Fatalf("redistest: SETSLOT %s NODE on %s: %v", s, n.Addr, err)
		}
	}
	if err := waitClusterReady(m.c.Nodes, startTimeout); err != nil {
		t.Fatalf("redistest: cluster after moving slot %s: %v", s, err)
	}
}

func nodeID(t testing.TB, n *Node) string {
	t.Helper()
	id, err := n.Do(t, "CLUSTER", "MYID").ToString()
	if err != nil {
		t.Fatalf("redistest: CLUSTER MYID on %s: %v", n.Addr, err)
	}
	return id
}
