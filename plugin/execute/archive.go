package execute

import (
	"context"
	"fmt"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/archive"
	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// maxArchiveErrorBytes bounds the reason an archive failed, as it is kept
// on the driver pod (decide shows it in the node's message, bounded the
// same).
const maxArchiveErrorBytes = spark.MaxDriverLogErrorBytes

// archiveLog stores the log of a driver that ended by itself, as the
// plan says, before its final result is written: it starts the upload
// (once; a pass while it runs finds it in flight) and, once it is over,
// records on the driver pod where the log went or why it could not be
// stored, which the next pass reads (decide's needsArchive, driverLogOf).
func (r *pass) archiveLog(rn *decide.Run) {
	c := r.core
	head := rn.Head()
	loc, err := archive.Location(r.scope.WorkflowObject(), head.Name)
	if err == nil {
		namespace, pod, uid, node := head.Namespace, head.Name, r.wf.UID, r.node
		var done bool
		done, err = c.archives.Start(context.Background(), head.UID, func(ctx context.Context) error {
			// Its node records the outcome on its next pass.
			defer c.work.AddAfter(flowKey(uid, node), afterDone)
			n, err := c.store.PutWithRetries(ctx, loc, namespace, pod, spark.DriverContainerName)
			if err == nil {
				c.log.Info("driver log archived", "namespace", namespace, "driver", pod, "bucket", loc.Bucket, "key", loc.Key, "bytes", n)
			}
			return err
		})
		if !done {
			return
		}
	}
	if err != nil {
		why := spec.Truncate(err.Error(), maxArchiveErrorBytes)
		r.log.Info("driver log not archived", "driver", head.Name, "error", why)
		if aerr := r.annotate(head, map[string]string{spark.AnnotationDriverLogError: why}); aerr != nil {
			r.log.Info("cannot record why the driver log was not archived; trying again", "driver", head.Name, "error", aerr.Error())
			return
		}
		c.archives.Forget(head.UID)
		c.event(r.wf, corev1.EventTypeWarning, spark.ReasonDriverLogNotArchived, fmt.Sprintf("driver %s: %s", head.Name, why))
		return
	}
	if aerr := r.annotate(head, map[string]string{spark.AnnotationDriverLog: loc.Key}); aerr != nil {
		r.log.Info("cannot record where the driver log went; trying again", "driver", head.Name, "error", aerr.Error())
		return
	}
	c.archives.Forget(head.UID)
	c.event(r.wf, corev1.EventTypeNormal, spark.ReasonDriverLogArchived, fmt.Sprintf("driver %s: log stored at s3://%s/%s", head.Name, loc.Bucket, loc.Key))
}

// driverLogOf is a node's driver-log output artifact, when the driver's
// log was archived, for workflow wf (why it could not be is decide's
// part of the message). The location is the workflow's
// repository's, as Argo resolved it, and the key the one sparkplug gives
// this driver: the annotation is only believed when it names that key, so
// no one who can write a pod's annotations can point the Argo UI (which
// fetches the artifact with the credentials the location names) at another
// server, bucket, key or Secret.
func driverLogOf(wf *wfv1.Workflow, driver *corev1.Pod) *wfv1.Artifact {
	key := driver.Annotations[spark.AnnotationDriverLog]
	if key == "" || wf == nil {
		return nil
	}
	loc, err := archive.Location(wf, driver.Name)
	if err != nil || loc.Key != key {
		return nil
	}
	return &wfv1.Artifact{Name: spark.OutputDriverLog, ArtifactLocation: wfv1.ArtifactLocation{S3: loc}}
}
