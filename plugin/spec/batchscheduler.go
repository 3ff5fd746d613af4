package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

var supportedBatchSchedulers = []string{spark.SchedulerKubeScheduler, spark.SchedulerVolcano, spark.SchedulerYuniKorn}

// validateBatchScheduler accepts the Spark operator's batch schedulers and
// rejects what one of them cannot honour. The operator ignores some of
// these silently (queue and resources with kube-scheduler, resources with
// yunikorn); sparkplug says so instead.
//
//   - volcano and yunikorn name the pods' scheduler, so a different driver
//     or executor schedulerName is a contradiction.
//   - kube-scheduler names the scheduler kube-scheduler unless
//     driver.schedulerName and executor.schedulerName name another; the
//     driver and the executors of one PodGroup must go to the same one.
//   - queue: Volcano's PodGroup takes a DNS-1123 subdomain (its CRD's
//     pattern), YuniKorn a label value; scheduler-plugins' PodGroup has
//     none.
//   - resources size a PodGroup: kube-scheduler's and Volcano's, not
//     YuniKorn's task groups, which are sized from the pods.
//   - A driver that names a PodGroup of its own gets none from sparkplug,
//     so queue and resources would size nothing.
func validateBatchScheduler(s *SparkApplicationSpec) field.ErrorList {
	var errs field.ErrorList
	p := rootPath.Child("batchScheduler")
	name := ""
	if s.BatchScheduler != nil {
		name = *s.BatchScheduler
		switch name {
		case spark.SchedulerVolcano, spark.SchedulerYuniKorn:
			for role, sched := range map[string]*string{spark.RoleDriver: s.Driver.SchedulerName, spark.RoleExecutor: s.Executor.SchedulerName} {
				if sched != nil && *sched != "" && *sched != name {
					errs = append(errs, field.Invalid(rootPath.Child(role, "schedulerName"), *sched, fmt.Sprintf("batchScheduler %s schedules the Spark pods; remove schedulerName", name)))
				}
			}
		case spark.SchedulerKubeScheduler:
			scheduler := func(n *string) string {
				if n == nil || *n == "" {
					return spark.SchedulerKubeScheduler
				}
				return *n
			}
			if d, e := scheduler(s.Driver.SchedulerName), scheduler(s.Executor.SchedulerName); d != e {
				errs = append(errs, field.Invalid(rootPath.Child(spark.RoleExecutor, "schedulerName"), e, fmt.Sprintf(
					"the driver goes to scheduler %s: with batchScheduler kube-scheduler the driver and the executors must go to the same scheduler, the one running scheduler-plugins' Coscheduling plugin; set the same schedulerName on both (unset is kube-scheduler)", d)))
			}
		default:
			errs = append(errs, field.NotSupported(p, name, supportedBatchSchedulers))
		}
	}
	o := s.BatchSchedulerOptions
	if o == nil {
		return sortErrs(errs)
	}
	op := rootPath.Child("batchSchedulerOptions")
	if s.BatchScheduler == nil {
		errs = append(errs, field.Required(p, "batchSchedulerOptions needs a batchScheduler: kube-scheduler, volcano or yunikorn"))
	}
	ownGroup := ""
	switch name {
	case spark.SchedulerVolcano:
		if _, ok := s.Driver.Annotations[spark.AnnotationVolcanoGroup]; ok {
			ownGroup = "spark.driver.annotations names a PodGroup of its own (" + spark.AnnotationVolcanoGroup + ")"
		}
	case spark.SchedulerKubeScheduler:
		if _, ok := s.Driver.Labels[spark.LabelPodGroup]; ok {
			ownGroup = "spark.driver.labels names a PodGroup of its own (" + spark.LabelPodGroup + ")"
		}
	}
	if o.Queue != nil {
		q := *o.Queue
		qp := op.Child("queue")
		switch {
		case strings.TrimSpace(q) == "":
			errs = append(errs, field.Invalid(qp, q, "must name a queue; remove queue for the scheduler's default"))
		case name == spark.SchedulerYuniKorn:
			// YuniKorn reads the queue from a label.
			for _, msg := range validation.IsValidLabelValue(q) {
				errs = append(errs, field.Invalid(qp, q, "is not a valid label value, which YuniKorn reads the queue from: "+msg))
			}
		case name == spark.SchedulerKubeScheduler:
			errs = append(errs, field.Forbidden(qp, "scheduler-plugins' PodGroup has no queue; remove queue (the Spark operator ignores it)"))
		case ownGroup != "":
			errs = append(errs, field.Forbidden(qp, ownGroup+", so sparkplug creates none to put in a queue; set the queue on that PodGroup"))
		case name == spark.SchedulerVolcano:
			errs = append(errs, validateName(qp, q, validation.IsDNS1123Subdomain, "a Volcano queue name")...)
		}
	}
	if o.PriorityClassName != nil {
		errs = append(errs, validateName(op.Child("priorityClassName"), *o.PriorityClassName, validation.IsDNS1123Subdomain, "a PriorityClass name")...)
	}
	if len(o.Resources) > 0 {
		rp := op.Child("resources")
		switch {
		case name == spark.SchedulerYuniKorn:
			errs = append(errs, field.Forbidden(rp, "YuniKorn has no PodGroup to size: its task groups take the pods' requests; remove resources (the Spark operator ignores it)"))
		case ownGroup != "":
			errs = append(errs, field.Forbidden(rp, ownGroup+", so sparkplug creates none to size; set minResources on that PodGroup"))
		}
		for _, r := range slices.Sorted(maps.Keys(o.Resources)) {
			for _, msg := range validation.IsQualifiedName(string(r)) {
				errs = append(errs, field.Invalid(rp.Key(string(r)), string(r), "is not a resource name such as cpu, memory or nvidia.com/gpu: "+msg))
			}
			if q := o.Resources[r]; q.Sign() < 0 {
				errs = append(errs, field.Invalid(rp.Key(string(r)), q.String(), "must not be negative"))
			}
		}
	}
	return sortErrs(errs)
}
