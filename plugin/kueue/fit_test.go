package kueue

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Kueue's messages below are its own words: v0.19.2's flavorassigner
// (fitsResourceQuota, Assignment.Message) and, for "request > maximum
// capacity (10 > 8)", the releases before.
const (
	overExecutors = "couldn't assign flavors to pod set executor: insufficient quota for cpu in flavor default, previously considered podsets requests (1) + current podset request (8) > maximum capacity (4)"
	overOld       = "couldn't assign flavors to pod set driver: insufficient quota for memory in flavor default, request > maximum capacity (10Gi > 8Gi)"
	busyDriver    = "couldn't assign flavors to pod set driver: insufficient unused quota for cpu in flavor default, 1 more needed"
)

func TestNeverFitsOfReadsKueuesMaximumCapacity(t *testing.T) {
	for _, tc := range []struct {
		name, reason, message, want string
	}{
		{"the executors exceed the queue's capacity", "Pending", overExecutors, overExecutors},
		{"an earlier Kueue's words", "Pending", overOld, overOld},
		{"two flavors, both too small", "Pending",
			"couldn't assign flavors to pod set executor: insufficient quota for cpu in flavor a, request > maximum capacity (8 > 4), insufficient quota for cpu in flavor b, request > maximum capacity (8 > 2)",
			"couldn't assign flavors to pod set executor: insufficient quota for cpu in flavor a, request > maximum capacity (8 > 4), insufficient quota for cpu in flavor b, request > maximum capacity (8 > 2)"},
		{"one pod set busy, the other too big: the big one is named", "Pending", busyDriver + "; " + overExecutors, overExecutors},
		{"quota in use: it may fit later", "Pending", busyDriver, ""},
		{"one flavor too small, another busy: it may fit later", "Pending",
			"couldn't assign flavors to pod set executor: insufficient quota for cpu in flavor a, request > maximum capacity (8 > 4), insufficient unused quota for cpu in flavor b, 3 more needed", ""},
		{"a flavor whose nodes do not match, another too small: in doubt it waits", "Pending",
			"couldn't assign flavors to pod set executor: flavor a doesn't match node affinity, insufficient quota for cpu in flavor b, request > maximum capacity (8 > 4)", ""},
		{"Kueue's own reason, words not known here", ReasonExceedsMaxQuota, "couldn't assign flavors to pod set executor: too big", "couldn't assign flavors to pod set executor: too big"},
		{"no message", "Pending", "", ""},
		{"a queue that does not exist", "Misconfigured", "LocalQueue lq doesn't exist", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NeverFitsOf(tc.reason, tc.message); got != tc.want {
				t.Errorf("NeverFitsOf(%q, %q) = %q, want %q", tc.reason, tc.message, got, tc.want)
			}
		})
	}
}

// Read says a Workload never fits only from a QuotaReserved condition
// that is not true, not once Kueue evicted it, and never of one Kueue
// may admit in part.
func TestReadSaysWhenAWorkloadNeverFits(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		conds    []metav1.Condition
		minCount *int32
		want     string
	}{
		{"too big", []metav1.Condition{cond(ConditionQuotaReserved, "False", "Pending", overExecutors, at)}, nil, overExecutors},
		// Kueue's message is of the whole count, fewer might fit later.
		{"too big, but it may be admitted in part", []metav1.Condition{cond(ConditionQuotaReserved, "False", "Pending", overExecutors, at)}, ptr.To[int32](1), ""},
		{"busy", []metav1.Condition{cond(ConditionQuotaReserved, "False", "Pending", busyDriver, at)}, nil, ""},
		{"evicted", []metav1.Condition{cond(ConditionQuotaReserved, "False", "Pending", overExecutors, at), cond(ConditionEvicted, "True", ReasonPreempted, "", at)}, nil, ""},
		{"admitted", []metav1.Condition{cond(ConditionQuotaReserved, "True", "QuotaReserved", overExecutors, at), cond(ConditionAdmitted, "True", "Admitted", "", at)}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := workload(tc.conds, nil)
			w.CreationTimestamp = metav1.NewTime(at)
			w.Spec.PodSets = append(w.Spec.PodSets, PodSet{Name: PodSetExecutor, Count: 8, MinCount: tc.minCount})
			u, err := ToUnstructured(w)
			if err != nil {
				t.Fatal(err)
			}
			u.Object["status"] = statusOf(t, w)
			u.Object["metadata"].(map[string]any)["creationTimestamp"] = at.Format(time.RFC3339)
			got, err := Read(u)
			if err != nil {
				t.Fatal(err)
			}
			if got.NeverFits != tc.want || !got.Created.Equal(at) {
				t.Errorf("Read: NeverFits %q, Created %v; want %q, %v", got.NeverFits, got.Created, tc.want, at)
			}
		})
	}
}
