package kueue

import (
	"regexp"
	"strings"
)

// ReasonExceedsMaxQuota is the QuotaReserved reason Kueue gives a
// Workload that asks more than its ClusterQueue (with what its cohort may
// lend) can ever hold: Kueue v0.19's, with its feature gate
// UnadmittedWorkloadsObservability on. Without the gate (the default) the
// reason is "Pending" and only the message says so.
const ReasonExceedsMaxQuota = "ExceedsMaxQuota"

// podSetClause opens each pod set's part of Kueue's message, the parts
// joined by "; " (flavorassigner's Assignment.Message).
const podSetClause = "couldn't assign flavors to pod set "

// overCapacity is one of a pod set's reasons that says it can never fit in
// one flavor: Kueue v0.19's words ("insufficient quota for cpu in flavor
// default, previously considered podsets requests (1) + current podset
// request (8) > maximum capacity (4)") and those of earlier releases
// ("insufficient quota for cpu in flavor default, request > maximum
// capacity (10 > 8)").
var overCapacity = regexp.MustCompile(`insufficient quota for \S+ in flavor \S+, (?:previously considered podsets requests \([^)]*\) \+ current podset request \([^)]*\)|request) > maximum capacity \([^)]*\)`)

// NeverFitsOf is what of a QuotaReserved condition that is not true
// (its reason and message) says the Workload can never be admitted as
// its ClusterQueue stands, "" when nothing does: the parts of the message
// of the pod sets every flavor of which is too small for them (each of
// their reasons is "> maximum capacity"). A pod set that might fit once
// other Workloads end ("insufficient unused quota"), or whose reasons are
// of any other kind, is not such a part: in doubt the Workload waits.
// With Kueue's own reason ExceedsMaxQuota the message is taken whole when
// no part reads so.
func NeverFitsOf(reason, message string) string {
	var parts []string
	for _, part := range strings.Split(message, "; ") {
		rest, ok := strings.CutPrefix(part, podSetClause)
		if !ok {
			continue
		}
		_, reasons, ok := strings.Cut(rest, ": ")
		if !ok || !overCapacity.MatchString(reasons) {
			continue
		}
		if strings.Trim(overCapacity.ReplaceAllString(reasons, ""), ", ") == "" {
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 && reason == ReasonExceedsMaxQuota {
		return message
	}
	return strings.Join(parts, "; ")
}
