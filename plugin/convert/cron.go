package convert

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/argoproj/argo-workflows/v3/pkg/apis/workflow"
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/schedule"
)

// defaultRunHistoryLimit is the Spark operator's default for both
// successfulRunHistoryLimit and failedRunHistoryLimit (Argo's are 3 and 1).
const defaultRunHistoryLimit = 1

// scheduledFields are the fields of a ScheduledSparkApplication's spec.
var scheduledFields = []string{
	"schedule", "timeZone", "template", "suspend", "concurrencyPolicy",
	"successfulRunHistoryLimit", "failedRunHistoryLimit",
}

// scheduledSparkApplication is the CronWorkflow running the template of a
// ScheduledSparkApplication on its schedule.
func scheduledSparkApplication(meta metav1.ObjectMeta, specValue any, f *findings) Object {
	s, ok := specValue.(map[string]any)
	if !ok {
		if specValue == nil {
			f.add("spec", "missing: no schedule and no template; skipped")
		} else {
			f.add("spec", "a %s, not an object; skipped", jsonKind(specValue))
		}
		return nil
	}
	for _, k := range sortedKeys(s) {
		if !slices.Contains(scheduledFields, k) {
			f.add("spec."+k, "not a field of a ScheduledSparkApplication; not carried over")
		}
	}
	expr, _ := s["schedule"].(string)
	if strings.TrimSpace(expr) == "" {
		f.add("spec.schedule", "missing or not a string: a CronWorkflow needs a schedule; skipped")
		return nil
	}
	body, ok := sparkBody("spec.template", s["template"], f)
	if !ok {
		return nil
	}
	cw := &wfv1.CronWorkflow{
		TypeMeta:   metav1.TypeMeta{APIVersion: wfv1.SchemeGroupVersion.String(), Kind: workflow.CronWorkflowKind},
		ObjectMeta: meta,
		Spec:       wfv1.CronWorkflowSpec{WorkflowSpec: workflowSpec(body)},
	}
	cronName(cw, f)
	// The operator puts its labels on every run; Argo puts
	// workflowMetadata's.
	if len(meta.Labels) > 0 {
		cw.Spec.WorkflowMetadata = &metav1.ObjectMeta{Labels: maps.Clone(meta.Labels)}
	}
	timeZone := stringField("spec.timeZone", s["timeZone"], f)
	cw.Spec.Schedules, cw.Spec.Timezone = convertSchedule(expr, timeZone, f)
	cw.Spec.ConcurrencyPolicy = concurrencyPolicy(s["concurrencyPolicy"], f)
	switch v := s["suspend"].(type) {
	case nil:
	case bool:
		cw.Spec.Suspend = v
	default:
		f.add("spec.suspend", "a %s, not a boolean; not carried over", jsonKind(v))
	}
	// The operator starts a run it missed (it was down) when it comes
	// back, however late; Argo skips it unless startingDeadlineSeconds
	// says how late it may start, which no field of the input gives.
	f.advise("spec", "missed runs are no longer caught up: the Spark operator starts a run it missed (it was down) when it comes back, however late; "+
		"Argo skips missed runs unless spec.startingDeadlineSeconds is set: add one saying how late a run may still start")
	cw.Spec.SuccessfulJobsHistoryLimit = historyLimit("spec.successfulRunHistoryLimit", s["successfulRunHistoryLimit"], f)
	cw.Spec.FailedJobsHistoryLimit = historyLimit("spec.failedRunHistoryLimit", s["failedRunHistoryLimit"], f)
	return cw
}

// cronName fits the name into Argo's limit.
func cronName(cw *wfv1.CronWorkflow, f *findings) {
	switch name, gen := cw.Name, cw.GenerateName; {
	case name != "":
		cw.GenerateName = ""
		if short := shorten(name, MaxCronWorkflowName); short != name {
			f.add("metadata.name", "%d characters, more than the %d Argo allows a CronWorkflow (its Workflows are named <name>-<unix time>, "+
				"at most %d); shortened to %q", len(name), MaxCronWorkflowName, MaxWorkflowName, short)
			cw.Name = short
		}
	case gen != "":
		if max := MaxCronWorkflowName - generatedSuffix; len(gen) > max {
			short := shorten(strings.TrimSuffix(gen, "-"), max-1) + "-"
			f.add("metadata.generateName", "%d characters: with the %d the API server appends, more than the %d Argo allows a CronWorkflow; shortened to %q",
				len(gen), generatedSuffix, MaxCronWorkflowName, short)
			cw.GenerateName = short
		}
	default:
		f.add("metadata.name", "missing; the CronWorkflow gets generateName %q", TemplateName+"-")
		cw.GenerateName = TemplateName + "-"
	}
}

// convertSchedule returns the CronWorkflow's schedules and timezone: a
// CRON_TZ= prefix becomes the timezone (the operator then ignores
// timeZone), and an @every interval the cron schedules of the same rate,
// when there are such.
func convertSchedule(expr, timeZone string, f *findings) ([]string, string) {
	zone, rest := schedule.SplitZone(expr)
	tz, tzPath := timeZone, "spec.timeZone"
	if zone != "" {
		if timeZone != "" && timeZone != zone {
			f.add("spec.timeZone", "%q is ignored by the Spark operator, as spec.schedule starts with its own zone; the CronWorkflow's timezone is %q, as the operator read it", timeZone, zone)
		}
		tz, tzPath = zone, "spec.schedule"
	}
	schedules := []string{rest}
	// As Argo: the expression, the zone, then both as its controller
	// reads them.
	s, err := schedule.Parse(rest, "")
	if err != nil {
		f.fail("spec.schedule", "Argo refuses the CronWorkflow: %v", err)
	}
	if tz != "" {
		if _, tzErr := time.LoadLocation(tz); tzErr != nil {
			f.fail(tzPath, "Argo refuses the CronWorkflow: invalid timezone %q: %v", tz, tzErr)
			return schedules, tz
		}
	}
	if err != nil {
		return schedules, tz
	}
	if tz != "" {
		if s, err = schedule.Parse(rest, tz); err != nil {
			f.fail("spec.schedule", "Argo refuses the CronWorkflow: %v", err)
			return schedules, tz
		}
	}
	every, ok := s.Every()
	if !ok {
		return schedules, tz
	}
	crons := schedule.CronFor(every)
	if len(crons) == 0 {
		f.add("spec.schedule", "%q kept, but %s; no cron schedule has its rate: choose one close to it", expr, schedule.EveryCaveat)
		return schedules, tz
	}
	where := ""
	if tz != "" && tz != "UTC" {
		where = fmt.Sprintf("; they are read in %s, where daylight saving skips or repeats some local times: `sparkplug schedule` shows which", tz)
	}
	f.add("spec.schedule", "%q became %s: %s; these run at the same rate, counted from midnight rather than from the last run%s",
		expr, quoteList(crons), schedule.EveryCaveat, where)
	return crons, tz
}

// concurrencyPolicy carries Allow, Forbid and Replace; Argo's default,
// Allow, stands in for anything else.
func concurrencyPolicy(v any, f *findings) wfv1.ConcurrencyPolicy {
	const path = "spec.concurrencyPolicy"
	switch p := v.(type) {
	case nil:
		f.add(path, "not set: the Spark operator then starts a run only while no earlier run's SparkApplication exists, finished or not "+
			"(its controller has no case for an empty policy), so it ran once; Argo's default, Allow, starts every run. "+
			"Set Forbid (skip a run while the last one still runs) or Allow to say which you want")
	case string:
		switch cp := wfv1.ConcurrencyPolicy(p); cp {
		case wfv1.AllowConcurrent, wfv1.ForbidConcurrent, wfv1.ReplaceConcurrent:
			return cp
		}
		f.add(path, "%q is not Allow, Forbid or Replace: the Spark operator starts no run while an earlier one exists, and Argo refuses it; left out (Argo's default: Allow)", p)
	default:
		f.add(path, "a %s, not a string; left out (Argo's default: Allow)", jsonKind(v))
	}
	return ""
}

// historyLimit is the operator's effective limit: the value given, or 1.
func historyLimit(path string, v any, f *findings) *int32 {
	limit := int32(defaultRunHistoryLimit)
	switch n := v.(type) {
	case nil:
	case json.Number:
		i, err := n.Int64()
		if err != nil || i < 0 || i > math.MaxInt32 {
			f.add(path, "%s is not a count of runs; the operator's default, %d, is used", n, defaultRunHistoryLimit)
			break
		}
		limit = int32(i)
	default:
		f.add(path, "a %s, not a number; the operator's default, %d, is used", jsonKind(v), defaultRunHistoryLimit)
	}
	return &limit
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "schedules " + strings.Join(q, ", ")
}

// hashSuffix is 8 hex digits of name's SHA-256.
func hashSuffix(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:4])
}
