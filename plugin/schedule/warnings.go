package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Kind says what a Warning is about.
type Kind string

const (
	// Skipped: local times the schedule names do not exist that day
	// (clocks go forward), and robfig/cron starts no run for them.
	Skipped Kind = "skipped"
	// Repeated: local times the schedule names happen twice (clocks go
	// back); Runs are the runs robfig/cron starts at them, one or two
	// each.
	Repeated Kind = "repeated"
	// Missed: times the schedule names, which exist, but at which
	// robfig/cron starts no run. Its hour and minute steps are whole
	// hours of absolute time, which pass over some local times after an
	// offset change of less than an hour (Australia/Lord_Howe).
	Missed Kind = "missed"
	// Extra: runs robfig/cron starts at a time the schedule does not name.
	Extra Kind = "extra"
	// Every: an @every schedule, which Argo starts again whenever its
	// controller handles the CronWorkflow.
	Every Kind = "every"
	// Never: robfig/cron finds no run within five years, so Argo never
	// runs it.
	Never Kind = "never"
)

// Warning is something about a schedule a person should know before
// relying on it.
type Warning struct {
	Kind Kind
	// Change is the first instant of the zone's new offset, for Skipped,
	// Repeated, Missed and Extra.
	Change time.Time
	// Wall are the local times concerned, "2006-01-02 15:04": those that
	// do not exist (Skipped), that happen twice (Repeated), at which no
	// run starts though they exist (Missed), or at which an unnamed run
	// starts (Extra).
	Wall []string
	// Runs are the runs robfig/cron starts at the Wall times (Repeated,
	// Extra).
	Runs    []time.Time
	Message string
}

// dstWindow is how far around an offset change Warnings compares
// robfig/cron's runs with the times the schedule names: robfig/cron's
// steps restart from midnight each day, so a change affects runs on its
// own day and, for changes at midnight, the next.
const dstWindow = 36 * time.Hour

// Warnings says what could surprise in the runs from from to to: for an
// @every schedule, what Argo does to intervals; for a schedule that never
// runs, that; otherwise what each change of the zone's UTC offset does to
// the runs, found by comparing, around each change, the runs robfig/cron
// starts with the local times the schedule names.
func (s *Schedule) Warnings(from, to time.Time) []Warning {
	if s.every > 0 {
		return []Warning{everyWarning(s.Expr, s.every)}
	}
	if s.sched.Next(from).IsZero() {
		return []Warning{{Kind: Never, Message: "robfig/cron finds no run within five years (a date that does not exist, such as February 30?), so Argo never runs it"}}
	}
	var ws []Warning
	for _, c := range offsetChanges(s.Location, from, to) {
		ws = append(ws, s.dst(c)...)
	}
	return ws
}

// EveryCaveat is what Argo does to an @every schedule.
var EveryCaveat = fmt.Sprintf("Argo's controller adds a CronWorkflow's schedules anew each time it handles it "+
	"(after each run, at its %s resync, on a restart) and robfig/cron counts an @every interval from that moment, "+
	"so the runs drift later and an interval of %s or more may never elapse", shortDuration(ResyncPeriod), shortDuration(ResyncPeriod))

func everyWarning(expr string, d time.Duration) Warning {
	same := "no cron schedule has this rate: choose one close to it"
	if crons := CronFor(d); len(crons) > 0 {
		same = fmt.Sprintf("the same rate on the clock: schedules %s", quoteAll(crons))
	}
	return Warning{Kind: Every, Message: fmt.Sprintf("%s: %s; %s", expr, EveryCaveat, same)}
}

// offsetChange is a change of a zone's UTC offset.
type offsetChange struct {
	at       time.Time // first instant of the new offset
	old, new *time.Location
}

// offsetChanges lists the changes of loc's UTC offset from from to to.
// Changes of only the zone's name are left out.
func offsetChanges(loc *time.Location, from, to time.Time) []offsetChange {
	var cs []offsetChange
	for t := from.In(loc); ; {
		_, end := t.ZoneBounds()
		if end.IsZero() || end.After(to) {
			return cs
		}
		oldName, oldOffset := end.Add(-time.Nanosecond).Zone()
		newName, newOffset := end.Zone()
		if oldOffset != newOffset {
			cs = append(cs, offsetChange{at: end, old: time.FixedZone(oldName, oldOffset), new: time.FixedZone(newName, newOffset)})
		}
		t = end
	}
}

// dst compares, around one offset change, the runs robfig/cron starts with
// the local times the schedule names.
func (s *Schedule) dst(c offsetChange) []Warning {
	loc := s.Location
	start, end := c.at.Add(-dstWindow).Truncate(time.Minute), c.at.Add(dstWindow)

	// named: every instant (a minute) whose local time the schedule names.
	named := map[int64]bool{}
	for t := start; t.Before(end); t = t.Add(time.Minute) {
		if s.names(t.In(loc)) {
			named[t.Unix()] = true
		}
	}
	runs := map[int64]bool{}
	for t := s.sched.Next(start.Add(-time.Second)); !t.IsZero() && t.Before(end); t = s.sched.Next(t) {
		runs[t.Unix()] = true
	}

	oldWall, newWall := naive(c.at.In(c.old)), naive(c.at.In(c.new))
	day := c.at.In(loc).Format(time.DateOnly)
	var ws []Warning
	repeated := map[int64]bool{}
	if newWall.After(oldWall) {
		// Clocks go forward: local times from oldWall to newWall do not
		// exist that day.
		var wall []string
		for w := oldWall; w.Before(newWall); w = w.Add(time.Minute) {
			if s.names(w) {
				wall = append(wall, w.Format("2006-01-02 15:04"))
			}
		}
		if len(wall) > 0 {
			ws = append(ws, Warning{Kind: Skipped, Change: c.at, Wall: wall, Message: fmt.Sprintf(
				"%s: clocks go forward from %s to %s, so %s %s not exist that day; robfig/cron, and so Argo, skips %s: the next run is %s",
				day, clock(c.at.In(c.old)), clock(c.at.In(c.new)), clocks(wall), doOrDoes(wall), itOrThem(wall), stamp(s.sched.Next(c.at.Add(-time.Second)).In(loc)))})
		}
	} else {
		// Clocks go back: local times from newWall to oldWall happen
		// twice, first at the old offset, then at the new.
		length := oldWall.Sub(newWall)
		var wall []string
		var got []time.Time
		twice, once := 0, 0
		for w := newWall; w.Before(oldWall); w = w.Add(time.Minute) {
			if !s.names(w) {
				continue
			}
			wall = append(wall, w.Format("2006-01-02 15:04"))
			first := c.at.Add(-length).Add(w.Sub(newWall))
			second := c.at.Add(w.Sub(newWall))
			repeated[first.Unix()], repeated[second.Unix()] = true, true
			n := 0
			for _, t := range []time.Time{first, second} {
				if runs[t.Unix()] {
					got = append(got, t.In(loc))
					n++
				}
			}
			switch n {
			case 2:
				twice++
			case 1:
				once++
			}
		}
		if len(wall) > 0 {
			var what string
			switch {
			case twice == len(wall):
				what = fmt.Sprintf("robfig/cron, and so Argo, starts the run at %s twice, %s apart: first in %s, then in %s "+
					"(with concurrencyPolicy Forbid the second is skipped while the first still runs)",
					clocks(wall), shortDuration(length), zoneName(c.old), zoneName(c.new))
			case once == len(wall):
				what = fmt.Sprintf("robfig/cron, and so Argo, starts the run at %s once", clocks(wall))
			default:
				what = fmt.Sprintf("robfig/cron, and so Argo, starts %d runs at these %d times", len(got), len(wall))
			}
			ws = append(ws, Warning{Kind: Repeated, Change: c.at, Wall: wall, Runs: got, Message: fmt.Sprintf(
				"%s: clocks go back from %s to %s, so %s-%s happens twice; %s",
				day, clock(c.at.In(c.old)), clock(c.at.In(c.new)), newWall.Format("15:04"), oldWall.Add(-time.Minute).Format("15:04"), what)})
		}
	}

	var missed, extra []string
	var extraRuns []time.Time
	for t := start; t.Before(end); t = t.Add(time.Minute) {
		u := t.Unix()
		switch {
		case named[u] && !runs[u] && !repeated[u]:
			missed = append(missed, stamp(t.In(loc)))
		case runs[u] && !named[u]:
			extra = append(extra, stamp(t.In(loc)))
			extraRuns = append(extraRuns, t.In(loc))
		}
	}
	if len(missed) > 0 {
		ws = append(ws, Warning{Kind: Missed, Change: c.at, Wall: missed, Message: fmt.Sprintf(
			"%s: robfig/cron, and so Argo, starts no run at %s, although the schedule names %s and %s: after the offset changes by %s at %s, "+
				"its whole-hour steps pass over %s",
			day, strings.Join(missed, ", "), itOrThem(missed), existOrExists(missed), shortDuration(offsetDelta(c)), clock(c.at.In(c.old)), itOrThem(missed))})
	}
	if len(extra) > 0 {
		ws = append(ws, Warning{Kind: Extra, Change: c.at, Wall: extra, Runs: extraRuns, Message: fmt.Sprintf(
			"%s: robfig/cron, and so Argo, also starts a run at %s, which the schedule does not name", day, strings.Join(extra, ", "))})
	}
	return ws
}

// names says whether the local time t is one the schedule names, by
// robfig/cron's own rules (day of month and day of week: both must match
// when either is *, else either).
func (s *Schedule) names(t time.Time) bool {
	sp := s.spec
	return 1<<uint(t.Second())&sp.Second != 0 &&
		1<<uint(t.Minute())&sp.Minute != 0 &&
		1<<uint(t.Hour())&sp.Hour != 0 &&
		1<<uint(t.Month())&sp.Month != 0 &&
		dayMatches(sp, t)
}

// starBit marks a field written as * or ? (robfig/cron's own bit).
const starBit = 1 << 63

func dayMatches(s *cron.SpecSchedule, t time.Time) bool {
	dom := 1<<uint(t.Day())&s.Dom != 0
	dow := 1<<uint(t.Weekday())&s.Dow != 0
	if s.Dom&starBit != 0 || s.Dow&starBit != 0 {
		return dom && dow
	}
	return dom || dow
}

// naive is t's local date and time as if in UTC, so that local times can
// be stepped through minute by minute.
func naive(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

func offsetDelta(c offsetChange) time.Duration {
	_, o := c.at.In(c.old).Zone()
	_, n := c.at.In(c.new).Zone()
	d := time.Duration(n-o) * time.Second
	if d < 0 {
		d = -d
	}
	return d
}

func zoneName(loc *time.Location) string {
	name, _ := time.Time{}.In(loc).Zone()
	return name
}

// clock is a local time with its zone, e.g. 02:00 CET.
func clock(t time.Time) string { return t.Format("15:04 MST") }

// stamp is a run as people read it, e.g. 2026-03-30 02:30 CEST.
func stamp(t time.Time) string { return t.Format("2006-01-02 15:04 MST") }

// clocks lists the times of day of wall, at most four of them.
func clocks(wall []string) string {
	const most = 4
	var cs []string
	for i, w := range wall {
		if i == most {
			cs = append(cs, fmt.Sprintf("%d more", len(wall)-most))
			break
		}
		cs = append(cs, w[len("2006-01-02 "):])
	}
	return strings.Join(cs, ", ")
}

func doOrDoes(wall []string) string {
	if len(wall) == 1 {
		return "does"
	}
	return "do"
}

func existOrExists(wall []string) string {
	if len(wall) == 1 {
		return "it exists"
	}
	return "they exist"
}

func itOrThem(wall []string) string {
	if len(wall) == 1 {
		return "it"
	}
	return "them"
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, " and ")
}

// shortDuration writes d without zero units: 1h, 30m, 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
