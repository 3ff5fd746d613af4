package decide

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

func TestLimits(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)}}
	submitted := state.Assessment{State: spark.StateSubmitted}
	pulling := state.Assessment{State: spark.StateSubmitted, Waiting: "ImagePullBackOff", Detail: `Back-off pulling image "spark:nope"`}
	creating := state.Assessment{State: spark.StateSubmitted, Waiting: "ContainerCreating"}
	running := state.Assessment{State: spark.StateRunning}
	exit := int32(1)
	failed := state.Assessment{State: spark.StateFailing, Done: true, ExitCode: &exit}

	cases := []struct {
		name       string
		a          state.Assessment
		now        time.Time
		timeout    time.Duration
		wantLimit  Limit
		wantDetail string
	}{
		{"running within the timeout", running, created.Add(time.Minute), time.Hour, LimitNone, ""},
		{"running past the timeout", running, created.Add(time.Hour), time.Hour, LimitTimeout, "timed out after 1h0m0s"},
		{"no timeout set", running, created.Add(100 * time.Hour), 0, LimitNone, ""},
		{"a finished attempt is never overridden", failed, created.Add(100 * time.Hour), time.Hour, LimitNone, ""},
		{"pending within the pending timeout", submitted, created.Add(time.Minute), 0, LimitNone, ""},
		{"pending past the pending timeout", creating, created.Add(10 * time.Minute), 0, LimitPending, "did not start within 10m0s (spark.sparkplug.pendingTimeout); it was waiting: ContainerCreating"},
		{"image pull back-off fails at once", pulling, created.Add(time.Second), 0, LimitCannotStart, `the driver cannot start: Back-off pulling image "spark:nope"`},
		{"the template timeout wins over a pending driver", pulling, created.Add(2 * time.Hour), time.Hour, LimitTimeout, "timed out"},
		{"a transient wait is not fatal", creating, created.Add(time.Second), 0, LimitNone, ""},
	}
	t.Run("a driver of unknown age is never past its pending timeout", func(t *testing.T) {
		if _, l := limits(creating, &corev1.Pod{}, time.Time{}, created, 0, time.Minute); l != LimitNone {
			t.Fatalf("Limit %q for a pod without a creation time", l)
		}
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, l := limits(tc.a, pod, created, tc.now, tc.timeout, 10*time.Minute)
			if l != tc.wantLimit {
				t.Fatalf("Limit %q, want %q", l, tc.wantLimit)
			}
			if l == LimitNone {
				if got.State != tc.a.State || got.Done != tc.a.Done {
					t.Fatalf("assessment changed without a limit: %+v", got)
				}
				return
			}
			if !got.Done || got.Succeeded || got.State != spark.StateFailing {
				t.Fatalf("a Limit must fail the attempt: %+v", got)
			}
			if !strings.Contains(got.Detail, tc.wantDetail) {
				t.Fatalf("detail %q lacks %q", got.Detail, tc.wantDetail)
			}
			if !strings.HasPrefix(got.Message(), "FAILED") {
				t.Fatalf("message %q", got.Message())
			}
		})
	}
}
