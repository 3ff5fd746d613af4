package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/robfig/cron/v3"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParseRefusesWhatArgoRefuses(t *testing.T) {
	tests := []struct {
		name, expr, timezone, want string
	}{
		{"minute out of range", "61 * * * *", "", `cron schedule "61 * * * *" is malformed: end of range (61) above maximum (59): 61`},
		{"four fields", "0 2 * *", "", `cron schedule "0 2 * *" is malformed: expected exactly 5 fields, found 4: [0 2 * *]`},
		{"six fields (seconds are not standard)", "0 30 2 * * *", "", "expected exactly 5 fields, found 6"},
		{"empty", "", "", `cron schedule "" is malformed: empty spec string`},
		{"unknown descriptor", "@fortnightly", "", `unrecognized descriptor: @fortnightly`},
		{"bad interval", "@every 90", "", `failed to parse duration @every 90`},
		{"unknown time zone", "30 2 * * *", "Europe/Berln", `invalid timezone "Europe/Berln": unknown time zone Europe/Berln`},
		{"offset is not a zone", "30 2 * * *", "+01:00", `invalid timezone "+01:00"`},
		{"unknown zone in the prefix", "CRON_TZ=Mars/Olympus 0 * * * *", "", `cron schedule "CRON_TZ=Mars/Olympus 0 * * * *" is malformed: provided bad location Mars/Olympus`},
		{"a prefix and a timezone: validated, never scheduled", "CRON_TZ=Asia/Tokyo 0 9 * * *", "Europe/Berlin",
			`its controller schedules "CRON_TZ=Europe/Berlin CRON_TZ=Asia/Tokyo 0 9 * * *", which robfig/cron refuses (expected exactly 5 fields, found 6`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.expr, tt.timezone)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%q, %q) = %v, %v; want an error containing %q", tt.expr, tt.timezone, s, err, tt.want)
			}
		})
	}
}

func TestParseReadsTheZoneAsArgoDoes(t *testing.T) {
	tests := []struct {
		name, expr, timezone, wantZone string
		wantEvery                      time.Duration
	}{
		{"no zone: the controller's, UTC", "30 2 * * *", "", "UTC", 0},
		{"timezone", "30 2 * * *", "Europe/Berlin", "Europe/Berlin", 0},
		{"CRON_TZ prefix", "CRON_TZ=Asia/Tokyo 0 9 * * *", "", "Asia/Tokyo", 0},
		{"TZ prefix", "TZ=America/Sao_Paulo 0 0 * * *", "", "America/Sao_Paulo", 0},
		{"Local is the controller's zone", "0 * * * *", "Local", "UTC", 0},
		{"descriptor", "@hourly", "UTC", "UTC", 0},
		{"@every", "@every 90m", "", "UTC", 90 * time.Minute},
		{"@every in a zone", "@every 3m", "Europe/Berlin", "Europe/Berlin", 3 * time.Minute},
		{"@every below a second is a second", "@every 500ms", "", "UTC", time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.expr, tt.timezone)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Location.String(); got != tt.wantZone {
				t.Errorf("Location = %s, want %s", got, tt.wantZone)
			}
			d, ok := s.Every()
			if d != tt.wantEvery || ok != (tt.wantEvery > 0) {
				t.Errorf("Every() = %v, %v; want %v", d, ok, tt.wantEvery)
			}
		})
	}
}

func TestSplitZone(t *testing.T) {
	tests := []struct{ in, zone, rest string }{
		{"CRON_TZ=Asia/Tokyo 0 9 * * *", "Asia/Tokyo", "0 9 * * *"},
		{"TZ=UTC @hourly", "UTC", "@hourly"},
		{"CRON_TZ=Europe/Berlin  30 2 * * *", "Europe/Berlin", "30 2 * * *"},
		{"0 9 * * *", "", "0 9 * * *"},
		{"@every 3m", "", "@every 3m"},
	}
	for _, tt := range tests {
		zone, rest := SplitZone(tt.in)
		if zone != tt.zone || rest != tt.rest {
			t.Errorf("SplitZone(%q) = %q, %q; want %q, %q", tt.in, zone, rest, tt.zone, tt.rest)
		}
	}
}

// Runs are written as local time with the zone, then UTC: what robfig/cron,
// and so Argo's controller, starts.
func TestNext(t *testing.T) {
	tests := []struct {
		name, expr, timezone, from string
		n                          int
		want                       []string
	}{
		{"Berlin 02:30, clocks go forward on March 29", "30 2 * * *", "Europe/Berlin", "2026-03-27T00:00:00Z", 4, []string{
			"2026-03-27 02:30 CET 01:30Z", "2026-03-28 02:30 CET 01:30Z", "2026-03-30 02:30 CEST 00:30Z", "2026-03-31 02:30 CEST 00:30Z"}},
		{"Berlin 02:30, clocks go back on October 25: twice", "30 2 * * *", "Europe/Berlin", "2026-10-23T12:00:00Z", 4, []string{
			"2026-10-24 02:30 CEST 00:30Z", "2026-10-25 02:30 CEST 00:30Z", "2026-10-25 02:30 CET 01:30Z", "2026-10-26 02:30 CET 01:30Z"}},
		{"Berlin hourly at :30 through the missing hour", "30 * * * *", "Europe/Berlin", "2026-03-29T00:00:00Z", 3, []string{
			"2026-03-29 01:30 CET 00:30Z", "2026-03-29 03:30 CEST 01:30Z", "2026-03-29 04:30 CEST 02:30Z"}},
		{"Sao Paulo midnight, 2018: midnight of November 4 did not exist", "0 0 * * *", "America/Sao_Paulo", "2018-11-02T12:00:00Z", 3, []string{
			"2018-11-03 00:00 -03 03:00Z", "2018-11-05 00:00 -02 02:00Z", "2018-11-06 00:00 -02 02:00Z"}},
		{"Sao Paulo midnight, today: no daylight saving since 2019", "0 0 * * *", "America/Sao_Paulo", "2026-11-02T12:00:00Z", 3, []string{
			"2026-11-03 00:00 -03 03:00Z", "2026-11-04 00:00 -03 03:00Z", "2026-11-05 00:00 -03 03:00Z"}},
		{"UTC", "0 */6 * * *", "UTC", "2026-03-29T01:00:00Z", 3, []string{
			"2026-03-29 06:00 UTC 06:00Z", "2026-03-29 12:00 UTC 12:00Z", "2026-03-29 18:00 UTC 18:00Z"}},
		{"no zone is UTC", "0 9 * * 1", "", "2026-03-29T01:00:00Z", 2, []string{
			"2026-03-30 09:00 UTC 09:00Z", "2026-04-06 09:00 UTC 09:00Z"}},
		{"@every 90m counts from from", "@every 90m", "", "2026-03-29T00:10:00Z", 3, []string{
			"2026-03-29 01:40 UTC 01:40Z", "2026-03-29 03:10 UTC 03:10Z", "2026-03-29 04:40 UTC 04:40Z"}},
		{"a date that never comes", "0 0 30 2 *", "", "2026-01-01T00:00:00Z", 3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.expr, tt.timezone)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range s.Next(mustTime(t, tt.from), tt.n) {
				got = append(got, r.Format("2006-01-02 15:04 MST ")+r.UTC().Format("15:04Z"))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Next (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeStartsOneRunWhenSchedulesMeet(t *testing.T) {
	var scheds []*Schedule
	for _, e := range []string{"0 */6 * * *", "0 12 * * *", "30 7 * * *"} {
		s, err := Parse(e, "UTC")
		if err != nil {
			t.Fatal(err)
		}
		scheds = append(scheds, s)
	}
	got := Merge(scheds, mustTime(t, "2026-03-29T01:00:00Z"), 5)
	want := []struct {
		at    string
		which []int
	}{
		{"06:00", []int{0}}, {"07:30", []int{2}}, {"12:00", []int{0, 1}}, {"18:00", []int{0}}, {"00:00", []int{0}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d runs, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		if at := got[i].At.Format("15:04"); at != w.at || !cmp.Equal(got[i].Schedules, w.which) {
			t.Errorf("run %d = %s %v, want %s %v", i, at, got[i].Schedules, w.at, w.which)
		}
	}
}

func TestCronFor(t *testing.T) {
	tests := []struct {
		every time.Duration
		want  []string
	}{
		{time.Minute, []string{"* * * * *"}},
		{3 * time.Minute, []string{"*/3 * * * *"}},
		{5 * time.Minute, []string{"*/5 * * * *"}},
		{30 * time.Minute, []string{"*/30 * * * *"}},
		{time.Hour, []string{"0 * * * *"}},
		{2 * time.Hour, []string{"0 */2 * * *"}},
		{24 * time.Hour, []string{"0 0 * * *"}},
		{90 * time.Minute, []string{"0 */3 * * *", "30 1-23/3 * * *"}},
		{45 * time.Minute, []string{"0,45 */3 * * *", "30 1-23/3 * * *", "15 2-23/3 * * *"}},
		{160 * time.Minute, []string{"0 */8 * * *", "40 2-23/8 * * *", "20 5-23/8 * * *"}},
		{7 * time.Minute, nil},           // does not divide a day
		{100 * time.Minute, nil},         // nor does this
		{48 * time.Hour, nil},            // longer than a day
		{30 * time.Second, nil},          // below a minute
		{90 * time.Second, nil},          // not whole minutes
		{25 * time.Hour, nil},            // drifts through the day
		{time.Minute + time.Second, nil}, // not whole minutes
	}
	for _, tt := range tests {
		if got := CronFor(tt.every); !cmp.Equal(got, tt.want) {
			t.Errorf("CronFor(%v) = %q, want %q", tt.every, got, tt.want)
		}
	}
}

// For every interval that divides a day, the schedules CronFor gives run,
// together, exactly every interval from midnight: checked with robfig/cron.
func TestCronForRunsAtTheRate(t *testing.T) {
	midnight := mustTime(t, "2026-01-05T00:00:00Z")
	for m := 1; m <= 24*60; m++ {
		if 24*60%m != 0 {
			continue
		}
		d := time.Duration(m) * time.Minute
		crons := CronFor(d)
		if len(crons) == 0 {
			t.Errorf("CronFor(%v): none, but %v divides a day", d, d)
			continue
		}
		got := map[time.Time]int{}
		for _, c := range crons {
			s, err := cron.ParseStandard(c)
			if err != nil {
				t.Fatalf("CronFor(%v) = %q: %v", d, crons, err)
			}
			for r := s.Next(midnight.Add(-time.Second)); r.Before(midnight.Add(24 * time.Hour)); r = s.Next(r) {
				got[r.UTC()]++
			}
		}
		for r := midnight; r.Before(midnight.Add(24 * time.Hour)); r = r.Add(d) {
			if got[r] != 1 {
				t.Errorf("CronFor(%v) = %q: runs %d times at %s, want once", d, crons, got[r], r.Format("15:04"))
			}
			delete(got, r)
		}
		for r := range got {
			t.Errorf("CronFor(%v) = %q: also runs at %s", d, crons, r.Format("15:04"))
		}
	}
}
