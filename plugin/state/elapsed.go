package state

import (
	"fmt"
	"time"
)

// A running Spark node's message carries how long its driver has run:
// Argo's controller moves a plugin node's finishedAt, and so the duration
// the UI shows, only when the plugin's reply changes, so the message is
// the node's only live signal. Every change of it is a write of the
// WorkflowTaskSet and then of the Workflow, so the time is rounded down to
// an interval: the message changes at most once per interval, from the
// clock and the driver's start alone, with nothing remembered between
// requests.

// Elapsed is how long a driver that started at started has run at now,
// rounded down to a multiple of interval. It is 0, and the message shows
// no time, when interval is 0 (turned off), the start is not known, or
// less than one interval has passed (the first RUNNING message stays the
// bare executor count, as its Event records it).
func Elapsed(now, started time.Time, interval time.Duration) time.Duration {
	if interval <= 0 || started.IsZero() {
		return 0
	}
	d := now.Sub(started)
	if d < interval {
		return 0 // also a start ahead of this clock (the node's runs ahead)
	}
	return d.Truncate(interval)
}

// FormatElapsed writes a duration compactly, in whole seconds under an
// hour and in whole minutes from an hour on, leaving out a zero last
// unit: 45s, 4m30s, 4m, 1h2m, 1h, 26h5m. A message stays short however
// long a driver runs.
func FormatElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	h := int64(d / time.Hour)
	m := int64(d % time.Hour / time.Minute)
	s := int64(d % time.Minute / time.Second)
	switch {
	case h > 0 && m > 0:
		return fmt.Sprintf("%dh%dm", h, m)
	case h > 0:
		return fmt.Sprintf("%dh", h)
	case m > 0 && s > 0:
		return fmt.Sprintf("%dm%ds", m, s)
	case m > 0:
		return fmt.Sprintf("%dm", m)
	default:
		return fmt.Sprintf("%ds", s)
	}
}
