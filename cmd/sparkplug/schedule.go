package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparkplug-io/sparkplug/plugin/schedule"
)

const scheduleSummary = `Check CronWorkflow schedules as Argo Workflows v3.7 does, list the next runs in
the time zone, and warn about what daylight saving time and @every do to them.

Each EXPR is one entry of the CronWorkflow's schedules; quote it:
  sparkplug schedule '30 2 * * *' --timezone Europe/Berlin
Five fields (minute hour day-of-month month day-of-week) or a descriptor (@hourly,
@daily, @every 90m), read by robfig/cron as Argo's controller reads them, with
CRON_TZ=<timezone> in front. Without --timezone the controller's own zone is used:
UTC in Argo's images.

Runs go to stdout; warnings to stderr: a local time that does not exist when clocks
go forward (the run is skipped), one that happens twice when they go back (the run
starts twice), within the next 12 months or the runs listed; and for @every, that
Argo starts the interval again whenever its controller handles the CronWorkflow,
with the cron schedules of the same rate.

Exit status: 0 when Argo accepts the schedules, 1 when it refuses one, 2 on a usage
error.`

type scheduleOptions struct {
	exprs    []string
	timezone string
	next     int
	from     string
	output   printFormat
}

func (o *scheduleOptions) validate() error {
	if len(o.exprs) == 0 {
		return errors.New("give at least one schedule, quoted: sparkplug schedule '30 2 * * *'")
	}
	if o.next < 0 {
		return fmt.Errorf("--next %d: give 0 or more runs", o.next)
	}
	if o.from != "" {
		if _, err := time.Parse(time.RFC3339, o.from); err != nil {
			return fmt.Errorf("--from %q: want RFC 3339, e.g. 2026-03-29T00:00:00Z: %w", o.from, err)
		}
	}
	return nil
}

func runSchedule(args []string, stdout, stderr io.Writer) error {
	return scheduleMain(args, time.Now(), stdout, stderr)
}

// warningWindow is how far ahead daylight saving warnings look at least.
const warningWindow = 365 * 24 * time.Hour

// scheduleFlags binds schedule's flags to o.
func scheduleFlags(o *scheduleOptions, stdout io.Writer) *pflag.FlagSet {
	flags := newFlagSet("schedule EXPR...", scheduleSummary, stdout)
	flags.StringVar(&o.timezone, "timezone", "", "the CronWorkflow's timezone, an IANA name such as Europe/Berlin (default: the controller's, UTC)")
	flags.IntVar(&o.next, "next", 5, "how many runs to list")
	flags.StringVar(&o.from, "from", "", "list the runs after this time, RFC 3339 (default: now)")
	bindPrintOutput(flags, &o.output, false, "lines to read; json and yaml hold the runs and the warnings")
	return flags
}

func scheduleMain(args []string, now time.Time, stdout, stderr io.Writer) error {
	o := scheduleOptions{}
	flags := scheduleFlags(&o, stdout)
	if err := parseFlags(flags, "schedule", args); err != nil {
		return err
	}
	o.exprs = flags.Args()
	if err := o.validate(); err != nil {
		return usageError("schedule", err)
	}
	from := now
	if o.from != "" {
		from, _ = time.Parse(time.RFC3339, o.from)
	}

	var scheds []*schedule.Schedule
	for _, e := range o.exprs {
		s, err := schedule.Parse(e, o.timezone)
		if err != nil {
			if unquoted(o.exprs) {
				err = fmt.Errorf("%w; each argument is one schedule: quote it, as in sparkplug schedule '30 2 * * *'", err)
			}
			return err
		}
		scheds = append(scheds, s)
	}

	controllerZone := o.timezone == "" && !strings.Contains(o.exprs[0], "TZ=")
	runs := schedule.Merge(scheds, from, o.next)
	to := from.Add(warningWindow)
	if len(runs) > 0 && runs[len(runs)-1].At.After(to) {
		to = runs[len(runs)-1].At
	}
	warnings := make([][]schedule.Warning, len(scheds))
	for i, s := range scheds {
		warnings[i] = s.Warnings(from, to)
	}
	if o.output.structured() {
		if err := writeStructured(stdout, &o.output, schedule.NewReport(scheds, controllerZone, from, runs, o.next, warnings)); err != nil {
			return err
		}
	} else {
		printRuns(stdout, scheds, controllerZone, from, runs, o.next)
	}
	for i, ws := range warnings {
		for _, w := range ws {
			prefix := "warning: "
			if len(scheds) > 1 {
				prefix += fmt.Sprintf("[%d] ", i+1)
			}
			fmt.Fprintln(stderr, prefix+w.Message)
		}
	}
	return nil
}

// printRuns writes the runs for a person to read.
func printRuns(stdout io.Writer, scheds []*schedule.Schedule, controllerZone bool, from time.Time, runs []schedule.Run, n int) {
	loc := scheds[0].Location
	zone := loc.String()
	if controllerZone {
		zone += " (no timezone: the workflow-controller's zone)"
	}
	fmt.Fprintf(stdout, "In %s, after %s:\n", zone, from.In(loc).Format("2006-01-02 15:04 MST"))
	if len(scheds) > 1 {
		for i, s := range scheds {
			fmt.Fprintf(stdout, "  [%d] %s\n", i+1, s.Expr)
		}
	}
	for _, r := range runs {
		line := fmt.Sprintf("  %s  %s", r.At.Format("2006-01-02 Mon 15:04 MST"), r.At.UTC().Format(time.RFC3339))
		if len(scheds) > 1 {
			line += "  " + which(r.Schedules)
		}
		fmt.Fprintln(stdout, line)
	}
	if len(runs) < n {
		fmt.Fprintf(stdout, "  (no more runs within five years)\n")
	}
}

// which names the schedules of a run; several start one Workflow.
func which(idx []int) string {
	s := make([]string, len(idx))
	for i, v := range idx {
		s[i] = fmt.Sprint(v + 1)
	}
	label := "[" + strings.Join(s, ",") + "]"
	if len(idx) > 1 {
		label += " one Workflow: Argo names it after the time"
	}
	return label
}

// unquoted says whether the arguments look like one schedule split by the
// shell: several, none with a space.
func unquoted(exprs []string) bool {
	if len(exprs) < 2 {
		return false
	}
	for _, e := range exprs {
		if strings.Contains(e, " ") {
			return false
		}
	}
	return true
}
