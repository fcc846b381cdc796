package scriptlock

import (
	"log/slog"
	"sync"
)

// reporter delivers the reports of the Client's goroutines that serve many
// holds at once (a watchdog round's losses and its Renewal, the replica
// count's warnings) in the order they were given, on a goroutine of its own:
// a logger or Observer that blocks (a log pipe nobody reads, a stalled
// exporter) then delays the reports after it, not the renewals of the other
// holds, nor an acquisition's count. Close stops it once it has delivered
// what was given it before (nothing is reported after Close returns), so a
// logger or Observer that never returns keeps Close from returning.
type reporter struct {
	log  *slog.Logger
	wake chan struct{}
	done chan struct{}

	mu    sync.Mutex
	queue []queuedReport
	// loose counts the entries of queue that may be dropped (log records,
	// Renewal events), at most maxLooseReports: past it they are dropped,
	// counted in droppedLogs and droppedRenewals and said once the reports
	// flow again. A HoldEnd is never dropped: it is one per hold, and an
	// Observer's held count would never come back to 0.
	loose                        int
	droppedLogs, droppedRenewals int
	closed                       bool
}

// queuedReport is one report for the reporter.
type queuedReport struct {
	f    func()
	kind reportKind
}

type reportKind uint8

const (
	reportLog     reportKind = iota // a log record: dropped past the bound
	reportRenewal                   // an Observer's Renewal: dropped past the bound
	reportHoldEnd                   // an Observer's HoldEnd: never dropped
)

// maxLooseReports bounds the log records and Renewal events waiting for a
// logger or Observer that blocks: a Renewal is given every round, as long as
// it blocks.
const maxLooseReports = 1024

func newReporter(log *slog.Logger) *reporter {
	r := &reporter{log: log, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go r.run()
	return r
}

// add gives reports to deliver after those given before, in order. Once
// the reporter is closed they run at once, on the caller's goroutine. It
// reports whether none was dropped.
func (r *reporter) add(reports ...queuedReport) (kept bool) {
	kept = true
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		for _, q := range reports {
			q.f()
		}
		return kept
	}
	for _, q := range reports {
		if q.kind != reportHoldEnd {
			if r.loose >= maxLooseReports {
				if q.kind == reportLog {
					r.droppedLogs++
				} else {
					r.droppedRenewals++
				}
				kept = false
				continue
			}
			r.loose++
		}
		r.queue = append(r.queue, q)
	}
	r.mu.Unlock()
	signal(r.wake)
	return kept
}

// logLater logs through the reporter: f writes the record. It reports
// whether the record was kept (false: dropped, the logger blocking with too
// many waiting), for a warning said once to be said again later.
func (r *reporter) logLater(f func()) bool { return r.add(queuedReport{f: f, kind: reportLog}) }

func (r *reporter) run() {
	defer close(r.done)
	for {
		r.mu.Lock()
		for len(r.queue) == 0 {
			if r.closed {
				r.mu.Unlock()
				return
			}
			r.queue = nil // what a long stall grew is let go
			r.mu.Unlock()
			<-r.wake
			r.mu.Lock()
		}
		q := r.queue[0]
		r.queue[0] = queuedReport{}
		r.queue = r.queue[1:]
		if q.kind != reportHoldEnd {
			r.loose--
		}
		r.mu.Unlock()
		q.f()
		r.mu.Lock()
		logs, renewals := r.droppedLogs, r.droppedRenewals
		r.droppedLogs, r.droppedRenewals = 0, 0
		r.mu.Unlock()
		if logs+renewals > 0 {
			// Said once, as soon as the logger or Observer returned.
			r.log.Warn("reports dropped: the logger or the Observer blocked while they piled up",
				"log_records", logs, "renewal_events", renewals)
		}
	}
}

// close delivers what was given before and stops the reporter; the reports
// given after it run on their caller's goroutine. Safe to call once.
func (r *reporter) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	signal(r.wake)
	<-r.done
}
