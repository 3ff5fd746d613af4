// Package schedule reads a CronWorkflow schedule exactly as Argo Workflows
// v3.7 does, says when it runs, and what daylight saving time does to it.
//
// Argo validates each entry of `schedules` with robfig/cron/v3's
// ParseStandard (five fields or a descriptor such as @hourly or @every 90m)
// and `timezone` with time.LoadLocation; its controller then schedules
// "CRON_TZ=<timezone> <schedule>" with robfig/cron, each entry on its own,
// and names each run <cron workflow>-<unix time of the run>. Parse does the
// same, so a schedule it accepts is one Argo runs, and Next lists the runs
// robfig/cron computes. Without a time zone the schedule is read in the
// controller's local zone, UTC in Argo's images; Parse uses UTC.
//
// robfig/cron adds whole hours and minutes to instants, so a local time that
// does not exist (clocks go forward) is skipped and one that happens twice
// (clocks go back) runs twice; Warnings compares what robfig/cron does with
// the wall-clock times the schedule names around every change of the zone's
// offset and reports each difference. It also reports what Argo does to
// @every: every time its controller handles the CronWorkflow (after each
// run, at the informer's 20-minute resync, on a restart) it adds the
// schedule again, which starts the interval again; CronFor gives the
// clock-aligned schedules with the same rate.
package schedule
