package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWarnings(t *testing.T) {
	type want struct {
		kind Kind
		wall []string
		runs []string // 15:04 MST
		msg  string   // a part of the message
	}
	tests := []struct {
		name, expr, timezone, from, to string
		want                           []want
	}{
		{"Berlin spring forward: 02:30 does not exist", "30 2 * * *", "Europe/Berlin", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z", []want{{
			kind: Skipped, wall: []string{"2026-03-29 02:30"},
			msg: "2026-03-29: clocks go forward from 02:00 CET to 03:00 CEST, so 02:30 does not exist that day; robfig/cron, and so Argo, skips it: the next run is 2026-03-30 02:30 CEST",
		}}},
		{"Berlin fall back: 02:30 happens twice, and runs twice", "30 2 * * *", "Europe/Berlin", "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z", []want{{
			kind: Repeated, wall: []string{"2026-10-25 02:30"}, runs: []string{"02:30 CEST", "02:30 CET"},
			msg: "2026-10-25: clocks go back from 03:00 CEST to 02:00 CET, so 02:00-02:59 happens twice; robfig/cron, and so Argo, starts the run at 02:30 twice, 1h apart: first in CEST, then in CET",
		}}},
		{"Berlin hourly: the missing hour's run is skipped", "30 * * * *", "Europe/Berlin", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z", []want{{
			kind: Skipped, wall: []string{"2026-03-29 02:30"}, msg: "the next run is 2026-03-29 03:30 CEST",
		}}},
		{"Berlin every 15 minutes: four skipped, four twice", "*/15 * * * *", "Europe/Berlin", "2026-03-01T00:00:00Z", "2026-11-01T00:00:00Z", []want{
			{kind: Skipped, wall: []string{"2026-03-29 02:00", "2026-03-29 02:15", "2026-03-29 02:30", "2026-03-29 02:45"}, msg: "so 02:00, 02:15, 02:30, 02:45 do not exist that day; robfig/cron, and so Argo, skips them"},
			{kind: Repeated, wall: []string{"2026-10-25 02:00", "2026-10-25 02:15", "2026-10-25 02:30", "2026-10-25 02:45"},
				runs: []string{"02:00 CEST", "02:00 CET", "02:15 CEST", "02:15 CET", "02:30 CEST", "02:30 CET", "02:45 CEST", "02:45 CET"}, msg: "starts the run at 02:00, 02:15, 02:30, 02:45 twice"},
		}},
		{"Berlin 03:00 exists on both days", "0 3 * * *", "Europe/Berlin", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", nil},
		{"Berlin 01:59 is before both changes", "59 1 * * *", "Europe/Berlin", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", nil},
		{"Sao Paulo 2018: midnight did not exist", "0 0 * * *", "America/Sao_Paulo", "2018-10-01T00:00:00Z", "2018-12-01T00:00:00Z", []want{{
			kind: Skipped, wall: []string{"2018-11-04 00:00"},
			msg: "2018-11-04: clocks go forward from 00:00 -03 to 01:00 -02, so 00:00 does not exist that day; robfig/cron, and so Argo, skips it: the next run is 2018-11-05 00:00 -02",
		}}},
		{"Sao Paulo 2019: 23:30 twice when clocks went back at midnight", "30 23 * * *", "America/Sao_Paulo", "2019-02-01T00:00:00Z", "2019-03-01T00:00:00Z", []want{{
			kind: Repeated, wall: []string{"2019-02-16 23:30"}, runs: []string{"23:30 -02", "23:30 -03"},
			msg: "2019-02-16: clocks go back from 00:00 -02 to 23:00 -03, so 23:00-23:59 happens twice",
		}}},
		{"Sao Paulo today: no daylight saving", "0 0 * * *", "America/Sao_Paulo", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", nil},
		{"Santiago: midnight of the first Sunday of September does not exist", "0 0 * * *", "America/Santiago", "2026-08-01T00:00:00Z", "2026-10-01T00:00:00Z", []want{{
			kind: Skipped, wall: []string{"2026-09-06 00:00"}, msg: "clocks go forward from 00:00 -04 to 01:00 -03",
		}}},
		{"UTC never changes", "30 2 * * *", "UTC", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", nil},
		{"Lord Howe: the offset changes by 30 minutes and robfig/cron misses an existing 02:15", "15 2 * * *", "Australia/Lord_Howe", "2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z", []want{{
			kind: Missed, wall: []string{"2026-04-05 02:15 +1030"},
			msg: "2026-04-05: robfig/cron, and so Argo, starts no run at 2026-04-05 02:15 +1030, although the schedule names it and it exists: after the offset changes by 30m at 02:00 +11",
		}}},
		{"Lord Howe spring: 02:15 does not exist", "15 2 * * *", "Australia/Lord_Howe", "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z", []want{{
			kind: Skipped, wall: []string{"2026-10-04 02:15"}, msg: "clocks go forward from 02:00 +1030 to 02:30 +11",
		}}},
		{"@every 90m", "@every 90m", "", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", []want{{
			kind: Every, msg: `@every 90m: Argo's controller adds a CronWorkflow's schedules anew each time it handles it (after each run, at its 20m resync, on a restart) and robfig/cron counts an @every interval from that moment, so the runs drift later and an interval of 20m or more may never elapse; the same rate on the clock: schedules "0 */3 * * *" and "30 1-23/3 * * *"`,
		}}},
		{"@every 3m", "@every 3m", "Europe/Berlin", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", []want{{
			kind: Every, msg: `the same rate on the clock: schedules "*/3 * * * *"`,
		}}},
		{"@every 7m has no cron equivalent", "@every 7m", "", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", []want{{
			kind: Every, msg: "no cron schedule has this rate",
		}}},
		{"February 30", "0 0 30 2 *", "", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", []want{{
			kind: Never, msg: "robfig/cron finds no run within five years",
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.expr, tt.timezone)
			if err != nil {
				t.Fatal(err)
			}
			ws := s.Warnings(mustTime(t, tt.from), mustTime(t, tt.to))
			if len(ws) != len(tt.want) {
				for _, w := range ws {
					t.Logf("%s: %s", w.Kind, w.Message)
				}
				t.Fatalf("%d warnings, want %d", len(ws), len(tt.want))
			}
			for i, w := range tt.want {
				got := ws[i]
				if got.Kind != w.kind {
					t.Errorf("warning %d: kind %s, want %s (%s)", i, got.Kind, w.kind, got.Message)
				}
				if !cmp.Equal(got.Wall, w.wall) {
					t.Errorf("warning %d: wall %q, want %q", i, got.Wall, w.wall)
				}
				var runs []string
				for _, r := range got.Runs {
					runs = append(runs, r.Format("15:04 MST"))
				}
				if !cmp.Equal(runs, w.runs) {
					t.Errorf("warning %d: runs %q, want %q", i, runs, w.runs)
				}
				if !strings.Contains(got.Message, w.msg) {
					t.Errorf("warning %d: message\n%s\nwant it to contain\n%s", i, got.Message, w.msg)
				}
			}
		})
	}
}

// What the warnings say robfig/cron does must be what Next lists.
func TestWarningsAgreeWithNext(t *testing.T) {
	s, err := Parse("30 2 * * *", "Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	var days []string
	for _, r := range s.Next(mustTime(t, "2026-03-28T12:00:00Z"), 2) {
		days = append(days, r.Format(time.DateOnly))
	}
	if want := []string{"2026-03-30", "2026-03-31"}; !cmp.Equal(days, want) {
		t.Errorf("runs after March 28 on %v, want %v (March 29 skipped)", days, want)
	}
	var oct []string
	for _, r := range s.Next(mustTime(t, "2026-10-24T12:00:00Z"), 2) {
		oct = append(oct, r.Format("2006-01-02 15:04 MST"))
	}
	if want := []string{"2026-10-25 02:30 CEST", "2026-10-25 02:30 CET"}; !cmp.Equal(oct, want) {
		t.Errorf("runs after October 24 %v, want %v (twice)", oct, want)
	}
}
