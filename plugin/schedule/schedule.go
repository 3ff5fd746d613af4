package schedule

import (
	"fmt"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // Argo's workflow-controller embeds the zone database too

	"github.com/robfig/cron/v3"
)

// ResyncPeriod is how often Argo's cron controller handles every
// CronWorkflow again, whether it changed or not (cronWorkflowResyncPeriod
// in workflow/cron/controller.go), adding its schedules to robfig/cron anew.
const ResyncPeriod = 20 * time.Minute

// Schedule is one entry of a CronWorkflow's schedules, read as Argo's
// controller reads it.
type Schedule struct {
	// Expr is the expression as written.
	Expr string
	// Location is the zone the schedule is read in: the timezone, else a
	// CRON_TZ= or TZ= prefix of Expr, else UTC (the controller's zone).
	Location *time.Location

	sched cron.Schedule
	spec  *cron.SpecSchedule // nil for @every
	every time.Duration      // the interval of @every, else 0
}

// Parse reads expr, in timezone when it is not empty, as Argo v3.7 does:
// first its validation (robfig/cron's ParseStandard of expr as written,
// then time.LoadLocation of timezone), then its controller, which
// schedules "CRON_TZ=<timezone> <expr>". A schedule that passes the
// validation but not the controller (expr has its own CRON_TZ= prefix and
// timezone is set) is an error too: Argo would accept the CronWorkflow and
// never run it.
//
// "Local", as a timezone or a CRON_TZ= value, is the controller's zone:
// UTC, as is no zone at all.
func Parse(expr, timezone string) (*Schedule, error) {
	if _, err := cron.ParseStandard(expr); err != nil {
		return nil, fmt.Errorf("cron schedule %q is malformed: %w", expr, err)
	}
	full := expr
	if timezone != "" {
		if _, err := time.LoadLocation(timezone); err != nil {
			return nil, fmt.Errorf("invalid timezone %q: %w", timezone, err)
		}
		full = "CRON_TZ=" + timezone + " " + expr
	}
	sched, err := cron.ParseStandard(full)
	if err != nil {
		return nil, fmt.Errorf("cron schedule %q names its own time zone and timezone is %q: Argo accepts the CronWorkflow, "+
			"but its controller schedules %q, which robfig/cron refuses (%w), so it never runs; keep only one of the two", expr, timezone, full, err)
	}
	s := &Schedule{Expr: expr, sched: sched, Location: time.UTC}
	switch c := sched.(type) {
	case *cron.SpecSchedule:
		if c.Location == time.Local {
			c.Location = time.UTC
		}
		s.spec, s.Location = c, c.Location
	case cron.ConstantDelaySchedule:
		s.every = c.Delay
		if loc, err := time.LoadLocation(zoneOf(expr, timezone)); err == nil && loc != time.Local {
			s.Location = loc
		}
	default:
		return nil, fmt.Errorf("cron schedule %q: robfig/cron returned a %T, which sparkplug does not know", expr, sched)
	}
	return s, nil
}

// zoneOf is the zone a schedule is read in: timezone, else the value of a
// CRON_TZ= or TZ= prefix, else "UTC".
func zoneOf(expr, timezone string) string {
	if timezone != "" {
		return timezone
	}
	for _, p := range []string{"CRON_TZ=", "TZ="} {
		if rest, ok := strings.CutPrefix(expr, p); ok {
			zone, _, _ := strings.Cut(rest, " ")
			return zone
		}
	}
	return "UTC"
}

// SplitZone splits a CRON_TZ= or TZ= prefix off a schedule: "CRON_TZ=Asia/Tokyo
// 0 9 * * *" is zone "Asia/Tokyo" and rest "0 9 * * *". A schedule without
// a prefix is returned unchanged, with an empty zone.
func SplitZone(expr string) (zone, rest string) {
	for _, p := range []string{"CRON_TZ=", "TZ="} {
		if after, ok := strings.CutPrefix(expr, p); ok {
			zone, rest, _ = strings.Cut(after, " ")
			return zone, strings.TrimLeft(rest, " ")
		}
	}
	return "", expr
}

// Every returns the interval of an @every schedule.
func (s *Schedule) Every() (time.Duration, bool) {
	return s.every, s.every > 0
}

// Next returns the next n runs after from, in s.Location, as the
// controller's robfig/cron starts them: each run is robfig/cron's Next of
// the one before. It returns fewer when robfig/cron finds no run within
// five years (it gives up then; so does Argo).
func (s *Schedule) Next(from time.Time, n int) []time.Time {
	var runs []time.Time
	for t := from; len(runs) < n; {
		t = s.sched.Next(t)
		if t.IsZero() {
			break
		}
		runs = append(runs, t.In(s.Location))
	}
	return runs
}

// Run is one run of several schedules.
type Run struct {
	At time.Time
	// Schedules are the indexes of the schedules that start a run at this
	// second. Argo names the Workflow after the second, so two schedules
	// that meet start one Workflow: the second submission already exists.
	Schedules []int
}

// Merge returns the next n runs after from of all the schedules of one
// CronWorkflow, in the first schedule's zone (they share the timezone).
func Merge(schedules []*Schedule, from time.Time, n int) []Run {
	if len(schedules) == 0 {
		return nil
	}
	var runs []Run
	for i, s := range schedules {
		for _, t := range s.Next(from, n) {
			j, found := slices.BinarySearchFunc(runs, t, func(r Run, t time.Time) int { return r.At.Compare(t) })
			if found {
				runs[j].Schedules = append(runs[j].Schedules, i)
				continue
			}
			runs = slices.Insert(runs, j, Run{At: t.In(schedules[0].Location), Schedules: []int{i}})
		}
	}
	if len(runs) > n {
		runs = runs[:n]
	}
	return runs
}

// CronFor returns schedules that, together, run at the rate of @every d,
// aligned on the clock from midnight: "*/m * * * *" when d is m minutes
// and m divides an hour, "0 */h * * *" when d is h hours and h divides a
// day, and, when d divides a day otherwise (90m, 45m), one schedule per
// group of minutes past the hour that share their hours. It returns nil
// when d is not a whole number of minutes dividing a day: no cron schedule
// has that rate.
func CronFor(d time.Duration) []string {
	const day = 24 * 60
	if d < time.Minute || d%time.Minute != 0 || day%int(d/time.Minute) != 0 {
		return nil
	}
	m := int(d / time.Minute)
	switch {
	case m == 1:
		return []string{"* * * * *"}
	case m == 60:
		return []string{"0 * * * *"}
	case m == day:
		return []string{"0 0 * * *"}
	case m%60 == 0:
		return []string{fmt.Sprintf("0 */%d * * *", m/60)}
	case 60%m == 0:
		return []string{fmt.Sprintf("*/%d * * * *", m)}
	}
	// The hours each minute past the hour runs in, then the minutes
	// grouped by equal hours, in the order of their first run.
	hours := map[int][]int{}
	for t := 0; t < day; t += m {
		hours[t%60] = append(hours[t%60], t/60)
	}
	type group struct{ minutes, hours []int }
	var groups []group
	for t := 0; t < 60; t++ {
		hs, ok := hours[t]
		if !ok {
			continue
		}
		i := slices.IndexFunc(groups, func(g group) bool { return slices.Equal(g.hours, hs) })
		if i < 0 {
			groups = append(groups, group{hours: hs})
			i = len(groups) - 1
		}
		groups[i].minutes = append(groups[i].minutes, t)
	}
	slices.SortStableFunc(groups, func(a, b group) int { return a.hours[0] - b.hours[0] })
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = fieldList(g.minutes, 59) + " " + fieldList(g.hours, 23) + " * * *"
	}
	return out
}

// fieldList writes the values of a cron field: a step ("*/3", "1-23/3")
// when they step evenly to the field's end, else a comma list.
func fieldList(vs []int, max int) string {
	if len(vs) > 2 {
		step := vs[1] - vs[0]
		even := true
		for i := 2; i < len(vs); i++ {
			even = even && vs[i]-vs[i-1] == step
		}
		if even && vs[len(vs)-1]+step > max {
			if vs[0] == 0 {
				return fmt.Sprintf("*/%d", step)
			}
			return fmt.Sprintf("%d-%d/%d", vs[0], max, step)
		}
	}
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ",")
}
