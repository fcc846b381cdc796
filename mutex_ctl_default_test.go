package scriptlock

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestMutexCtlDefault: a Lock with the default settings sends MutexAcquire
// no ctl, so the script's default must be the ctl such a Lock would send;
// any other ctl is sent.
func TestMutexCtlDefault(t *testing.T) {
	var src string
	for _, s := range generated.Scripts {
		if s.Name == "MutexAcquire" {
			src = s.Source
		}
	}
	if want := "local ctl = ARGV[3] or '" + defaultMutexCtl + "'\n"; !strings.Contains(src, want) {
		t.Fatalf("MutexAcquire does not default its ctl to the default Lock's %q (want the line %q)", defaultMutexCtl, want)
	}
	if got := newMutexCtl(DefaultFenceIdle, DefaultWaiterTimeout)[1]; got != defaultMutexCtl || ctlArgs(got) != nil {
		t.Fatalf("a default waiting Lock's ctl %q is sent (%q), want it left out", got, ctlArgs(got))
	}
	for _, ctl := range []string{
		newMutexCtl(DefaultFenceIdle, DefaultWaiterTimeout)[0],
		acquireCtl(true, false, DefaultFenceIdle, DefaultWaiterTimeout, 0),
		acquireCtl(false, true, DefaultFenceIdle, DefaultWaiterTimeout, 0),
		acquireCtl(false, false, DefaultFenceIdle, DefaultWaiterTimeout, 17),
		acquireCtl(false, false, DefaultFenceIdle+time.Millisecond, DefaultWaiterTimeout, 0),
		acquireCtl(false, false, DefaultFenceIdle, 2*DefaultWaiterTimeout, 0),
	} {
		if got := ctlArgs(ctl); len(got) != 1 || got[0] != ctl {
			t.Errorf("ctl %q is sent as %q, want it sent", ctl, got)
		}
	}
}
