package scriptlock

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestMutexAcquireDefaults: a Lock with the default settings sends
// MutexAcquire neither its lease nor its ctl, so the script's defaults must
// be what such a Lock would send; any other value is sent, with the lease
// before it.
func TestMutexAcquireDefaults(t *testing.T) {
	var src string
	for _, s := range generated.Scripts {
		if s.Name == "MutexAcquire" {
			src = s.Source
		}
	}
	for _, want := range []string{
		"local lease = ARGV[2] or '" + defaultMutexLease + "'\n",
		"local ctl = ARGV[3] or '" + defaultMutexCtl + "'\n",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("MutexAcquire lacks the default Lock's value: want the line %q", want)
		}
	}
	if got := msFormat(DefaultLease); got != defaultMutexLease {
		t.Errorf("DefaultLease is %s ms, the script's default %s", got, defaultMutexLease)
	}
	if got := newMutexCtl(DefaultFenceIdle, DefaultWaiterTimeout)[1]; got != defaultMutexCtl || acquireOpts(new([2]string), DefaultLease, got) != nil {
		t.Errorf("a default waiting Lock's lease and ctl %q are sent (%q), want them left out", got, acquireOpts(new([2]string), DefaultLease, got))
	}
	for _, lease := range []time.Duration{time.Minute, 1500 * time.Microsecond, time.Minute, DefaultLease + time.Millisecond} {
		if got, want := acquireOpts(new([2]string), lease, defaultMutexCtl), []string{msFormat(lease)}; !slices.Equal(got, want) {
			t.Errorf("lease %v with the default ctl is sent as %q, want %q", lease, got, want)
		}
	}
	for _, ctl := range []string{
		newMutexCtl(DefaultFenceIdle, DefaultWaiterTimeout)[0],
		acquireCtl(true, false, DefaultFenceIdle, DefaultWaiterTimeout, 0),
		acquireCtl(false, true, DefaultFenceIdle, DefaultWaiterTimeout, 0),
		acquireCtl(false, false, DefaultFenceIdle, DefaultWaiterTimeout, 17),
		acquireCtl(false, false, DefaultFenceIdle+time.Millisecond, DefaultWaiterTimeout, 0),
		acquireCtl(false, false, DefaultFenceIdle, 2*DefaultWaiterTimeout, 0),
	} {
		for _, lease := range []time.Duration{DefaultLease, time.Minute} {
			if got, want := acquireOpts(new([2]string), lease, ctl), []string{msFormat(lease), ctl}; !slices.Equal(got, want) {
				t.Errorf("lease %v and ctl %q are sent as %q, want %q", lease, ctl, got, want)
			}
		}
	}
}

// msFormat is a duration in ms, a part of one rounded up, as Redis is sent it.
func msFormat(d time.Duration) string {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return strconv.FormatInt(int64(ms), 10)
}
