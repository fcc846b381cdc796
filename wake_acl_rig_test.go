package scriptlock

import (
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// publishOnlyOn makes an ACL user that may run every command on every key but
// publish only on channels, and returns a client of it.
func publishOnlyOn(t *testing.T, n *redistest.Node, channels ...string) rueidis.Client {
	t.Helper()
	args := []string{"ACL", "SETUSER", "app", "on", ">pw", "~*", "resetchannels"}
	for _, ch := range channels {
		args = append(args, "&"+ch)
	}
	if err := n.Do(t, append(args, "+@all")...).Error(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	return n.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "app", "pw" })
}

// seedWaiters sets m's waiter set to waiters (score, member pairs), expiring
// in ten minutes, and, when holder is not empty, m's lock to held by holder.
func seedWaiters(t *testing.T, n *redistest.Node, m *Mutex, holder string, waiters ...string) {
	t.Helper()
	cmds := [][]string{{"DEL", m.key, m.waiters}}
	if holder != "" {
		cmds = append(cmds, []string{"HSET", m.key, holder, "1"}, []string{"PEXPIRE", m.key, "600000"})
	}
	for i := 0; i < len(waiters); i += 2 {
		cmds = append(cmds, []string{"ZADD", m.waiters, waiters[i], waiters[i+1]})
	}
	for _, cmd := range append(cmds, []string{"PEXPIRE", m.waiters, "600000"}) {
		if err := n.Do(t, cmd...).Error(); err != nil {
			t.Fatal(err)
		}
	}
}
