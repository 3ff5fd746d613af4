package schedule

import "time"

// ReportKind and ReportAPIVersion name the structure of `sparkplug
// schedule -o json|yaml`. Fields are only ever added to it.
const (
	ReportAPIVersion = "sparkplug.io/v1alpha1"
	ReportKind       = "ScheduleRuns"
)

// Report is the next runs of schedules after a time, and their warnings,
// for programs.
type Report struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Timezone is the zone the runs are in; ControllerZone says it is
	// the workflow-controller's (no timezone was given).
	Timezone       string `json:"timezone"`
	ControllerZone bool   `json:"controllerZone,omitempty"`
	// From is the time after which the runs are listed, RFC 3339.
	From      string   `json:"from"`
	Schedules []string `json:"schedules"`
	Runs      []RunAt  `json:"runs"`
	// More is false when the runs end within five years, fewer than
	// asked for.
	More     bool            `json:"more"`
	Warnings []ReportWarning `json:"warnings"`
}

// RunAt is one run: its time in the zone and in UTC, and the schedules
// that start it (from 1, in the order given).
type RunAt struct {
	At        string `json:"at"`
	UTC       string `json:"utc"`
	Schedules []int  `json:"schedules"`
}

// ReportWarning is one warning of a schedule (from 1).
type ReportWarning struct {
	Schedule int    `json:"schedule"`
	Kind     Kind   `json:"kind"`
	Message  string `json:"message"`
}

// NewReport is the Report of runs of scheds after from, asked for n of
// them, and each schedule's warnings (by index).
func NewReport(scheds []*Schedule, controllerZone bool, from time.Time, runs []Run, n int, warnings [][]Warning) Report {
	loc := scheds[0].Location
	r := Report{
		APIVersion: ReportAPIVersion, Kind: ReportKind,
		Timezone: loc.String(), ControllerZone: controllerZone,
		From: from.In(loc).Format(time.RFC3339), Schedules: []string{}, Runs: []RunAt{}, Warnings: []ReportWarning{},
		More: len(runs) >= n,
	}
	for _, s := range scheds {
		r.Schedules = append(r.Schedules, s.Expr)
	}
	for _, run := range runs {
		idx := make([]int, len(run.Schedules))
		for i, v := range run.Schedules {
			idx[i] = v + 1
		}
		r.Runs = append(r.Runs, RunAt{At: run.At.Format(time.RFC3339), UTC: run.At.UTC().Format(time.RFC3339), Schedules: idx})
	}
	for i, ws := range warnings {
		for _, w := range ws {
			r.Warnings = append(r.Warnings, ReportWarning{Schedule: i + 1, Kind: w.Kind, Message: w.Message})
		}
	}
	return r
}
