package execute

import (
	"context"
	"fmt"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/archive"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// Event reasons of log archiving.
const (
	ReasonDriverLogArchived    = "SparkDriverLogArchived"
	ReasonDriverLogNotArchived = "SparkDriverLogNotArchived"
)

// maxArchiveErrorBytes bounds the reason an archive failed, as it is kept
// on the driver pod and shown in the node's message.
const maxArchiveErrorBytes = 512

// archiveLog stores the log of a run whose driver ended by itself, before
// its final result is handed out, when the step asks for it. It returns
// the outcome to answer while the upload runs (Running, so the agent asks
// again), or nil once the log is stored, could not be stored (the driver
// pod then says why, and the final message too), or needs no storing.
func (r *request) archiveLog(rn *run, o state.Outcome) (*state.Outcome, error) {
	if (o.Phase != wfv1.NodeSucceeded && o.Phase != wfv1.NodeFailed) || !r.step.Body.ArchivesLogs() || rn.ghost || rn.tomb != nil {
		return nil, nil
	}
	head := rn.head()
	if head.DeletionTimestamp != nil || head.Annotations[spark.AnnotationDriverLog] != "" || head.Annotations[spark.AnnotationDriverLogError] != "" {
		return nil, nil
	}
	c := r.core
	loc, err := archive.Location(r.scope.WorkflowObject(), head.Name)
	if err == nil {
		var done bool
		namespace, pod := head.Namespace, head.Name
		done, err = c.archives.Start(context.Background(), head.UID, func(ctx context.Context) error {
			n, err := c.store.PutWithRetries(ctx, loc, namespace, pod, spark.DriverContainerName)
			if err == nil {
				c.log.Info("driver log archived", "namespace", namespace, "driver", pod, "bucket", loc.Bucket, "key", loc.Key, "bytes", n)
			}
			return err
		})
		if !done {
			waiting := o
			waiting.Phase = wfv1.NodeRunning
			waiting = waiting.WithNote("; archiving the driver log")
			return &waiting, nil
		}
	}
	defer c.archives.Forget(head.UID)
	if err != nil {
		why := spec.Truncate(err.Error(), maxArchiveErrorBytes)
		r.log.Info("driver log not archived", "driver", head.Name, "error", why)
		c.event(r.wf, corev1.EventTypeWarning, ReasonDriverLogNotArchived, fmt.Sprintf("driver %s: %s", head.Name, why))
		return nil, r.annotate(rn, map[string]string{spark.AnnotationDriverLogError: why})
	}
	c.event(r.wf, corev1.EventTypeNormal, ReasonDriverLogArchived, fmt.Sprintf("driver %s: log stored at s3://%s/%s", head.Name, loc.Bucket, loc.Key))
	return nil, r.annotate(rn, map[string]string{spark.AnnotationDriverLog: loc.Key})
}

// driverLog is the node's driver-log output artifact, when the driver's
// log was archived, and the note its final message ends with when it could
// not be (driverLogOf).
func (r *request) driverLog(driver *corev1.Pod) (*wfv1.Artifact, string) {
	return driverLogOf(r.scope.WorkflowObject(), driver)
}

// driverLogOf is driverLog for workflow wf. The location is the workflow's
// repository's, as Argo resolved it, and the key the one sparkplug gives
// this driver: the annotation is only believed when it names that key, so
// no one who can write a pod's annotations can point the Argo UI (which
// fetches the artifact with the credentials the location names) at another
// server, bucket, key or Secret.
func driverLogOf(wf *wfv1.Workflow, driver *corev1.Pod) (*wfv1.Artifact, string) {
	if why := driver.Annotations[spark.AnnotationDriverLogError]; why != "" {
		return nil, "; driver log not archived: " + spec.Truncate(why, maxArchiveErrorBytes)
	}
	key := driver.Annotations[spark.AnnotationDriverLog]
	if key == "" || wf == nil {
		return nil, ""
	}
	loc, err := archive.Location(wf, driver.Name)
	if err != nil || loc.Key != key {
		return nil, ""
	}
	return &wfv1.Artifact{Name: archive.ArtifactName, ArtifactLocation: wfv1.ArtifactLocation{S3: loc}}, ""
}
