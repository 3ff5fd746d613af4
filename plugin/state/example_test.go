package state_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

func ExampleAssess() {
	submitted := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	driver := &corev1.Pod{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: spark.DriverContainerName}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodFailed,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: spark.DriverContainerName,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 1,
					Reason:   "Error",
					// The tail of the driver's log (terminationMessagePolicy
					// FallbackToLogsOnError).
					Message: "Exception in thread \"main\" java.lang.IllegalArgumentException: bad input\n" +
						"\tat com.example.Main$.main(Main.scala:10)\n" +
						"25/03/01 12:03:00 INFO ShutdownHookManager: Shutdown hook called\n",
				}},
			}},
		},
	}

	a := state.Assess(state.Observed{
		Driver:        driver,
		Expected:      3,
		SubmittedAt:   submitted,
		Now:           submitted.Add(3 * time.Minute),
		NotFoundGrace: 30 * time.Second,
	})
	fmt.Println(a.State, a.Done, *a.ExitCode, a.Infrastructure)
	fmt.Println(a.Phase())
	fmt.Println(a.Message())

	// The same attempt before the cache has seen the driver pod.
	a = state.Assess(state.Observed{SubmittedAt: submitted, Now: submitted.Add(time.Second), NotFoundGrace: 30 * time.Second})
	fmt.Println(a.Phase(), a.Message())
	// Output:
	// FAILING true 1 false
	// Failed
	// FAILED: driver exited 1 (Error): java.lang.IllegalArgumentException: bad input
	// Pending SUBMITTED: waiting for the driver pod to appear
}
