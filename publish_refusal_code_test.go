package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestPublishRefusalTellsChannelFromKeys: the scripts that check whether the
// ACL user may publish their message refuse with a code of their own, which
// names the channel; Redis's own NOPERM (the user may not touch the keys) is
// passed through as Redis's error. Both used to decode as one script error
// whose text spoke of channels, so a user refused the keys was told to grant
// channels. Neither refusal writes anything.
func TestPublishRefusalTellsChannelFromKeys(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	for _, u := range [][]string{
		{"nokeys", "on", ">pw", "~elsewhere:*", "&*", "+@all"},
		{"nochannels", "on", ">pw", "~*", "resetchannels", "+@all"},
	} {
		if err := n.Do(t, append([]string{"ACL", "SETUSER"}, u...)...).Error(); err != nil {
			t.Fatalf("ACL SETUSER: %v", err)
		}
	}
	prefix := sharedPrefix(t)
	admin := newTestClient(t, n.Client(t), prefix)
	as := func(user string) *Client {
		return newTestClient(t, n.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = user, "pw" }), prefix)
	}
	ctx := testCtx(t, 30*time.Second)

	sem, _ := admin.Semaphore("s")
	if ok, err := sem.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits: %v %v", ok, err)
	}
	if err := sem.Acquire(ctx, 1); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	ps, _ := admin.PermitSemaphore("ps")
	if ok, err := ps.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("PermitSemaphore TrySetPermits: %v %v", ok, err)
	}
	fresh, _ := admin.Semaphore("fresh")
	latch, _ := admin.CountDownLatch("l")
	if ok, err := latch.TrySetCount(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetCount: %v %v", ok, err)
	}
	type op struct {
		name    string
		channel string // the channel the refusal names
		key     string
		want    int64 // the count left, or -1: the key does not exist
		call    func(c *Client) error
	}
	ops := []op{
		{"Semaphore.Release", sem.channel, sem.Key(), 0, func(c *Client) error {
			s, _ := c.Semaphore("s")
			return s.Release(ctx, 1)
		}},
		{"Semaphore.AddPermits", sem.channel, sem.Key(), 0, func(c *Client) error {
			s, _ := c.Semaphore("s")
			_, err := s.AddPermits(ctx, 1)
			return err
		}},
		{"Semaphore.TrySetPermits", "", fresh.Key(), -1, func(c *Client) error {
			s, _ := c.Semaphore("fresh")
			_, err := s.TrySetPermits(ctx, 3)
			return err
		}},
		{"PermitSemaphore.AddPermits", "", ps.Key(), 1, func(c *Client) error {
			s, _ := c.PermitSemaphore("ps")
			_, err := s.AddPermits(ctx, 2)
			return err
		}},
		{"CountDownLatch.CountDown", "", latch.Key(), 1, func(c *Client) error {
			l, _ := c.CountDownLatch("l")
			return l.CountDown(ctx)
		}},
	}
	check := func(user string, o op) {
		t.Helper()
		if o.want < 0 {
			if got, _ := n.Do(t, "EXISTS", o.key).AsInt64(); got != 0 {
				t.Errorf("%s as %s: refused, yet %q exists", o.name, user, o.key)
			}
		} else if got := countAt(t, n, o.key); got != o.want {
			t.Errorf("%s as %s: refused, yet the count is %d, not %d", o.name, user, got, o.want)
		}
	}
	keysUser, channelsUser := as("nokeys"), as("nochannels")
	for _, o := range ops {
		err := o.call(keysUser)
		var se *generated.ScriptError
		var re *rueidis.RedisError
		if errors.As(err, &se) || !errors.As(err, &re) || !strings.HasPrefix(re.Error(), "NOPERM") {
			t.Errorf("%s as a user refused the keys: %v (%T), want Redis's NOPERM as it is, not a script's refusal", o.name, err, err)
		}
		check("nokeys", o)

		err = o.call(channelsUser)
		se = nil
		if !errors.As(err, &se) || se.Code == "NOPERM" || !strings.Contains(se.Message, "channel") ||
			(o.channel != "" && !strings.Contains(se.Message, o.channel)) {
			t.Errorf("%s as a user refused the channel: %v, want the script's own refusal code naming the channel %q", o.name, err, o.channel)
		}
		check("nochannels", o)
	}
}
