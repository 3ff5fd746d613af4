package monitor

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/record"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/kube"
	"github.com/sparkplug-io/sparkplug/plugin/redact"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// The sidecar deletes the drivers of its workflow while the workflow runs,
// and those of a stopped one when its agent pod goes; but Argo deletes
// the agent pod, sidecar and all, when the workflow ends, and the sidecar
// sees no more: the drivers of a workflow's last steps outlive their
// timeToLiveSeconds, and a driver still running when a workflow was
// stopped while its sidecar was down runs on. The monitor, which outlives
// every workflow, deletes them. It acts only on drivers that pass the
// sidecar's own ownership rule (driverpod.OwnDriver), and only after
// reading the Workflow from the API server: never on what its cache lacks
// alone, never on a completed label a retried workflow just dropped.

// The monitor records the sidecar's Event reasons (spark.ReasonDriverExpired
// and ReasonDriverDeleted): the same thing happened.

// workflowState is what the API server says of a driver's Workflow.
type workflowState uint8

const (
	// workflowRunning: it exists and has not completed; its sidecar (or
	// the next one Argo starts) looks after its drivers.
	workflowRunning workflowState = iota
	// workflowEnded: it exists and has completed (Argo's completed label),
	// or is being deleted.
	workflowEnded
	// workflowGone: no Workflow of its name, or one of another uid.
	workflowGone
)

// verdict says whether the monitor deletes driver p of a workflow in
// state wf, and why (a reason of sparkplug_monitor_drivers_deleted_total);
// "" keeps it. p must be a driver OwnDriver accepted.
func verdict(p *corev1.Pod, wf workflowState, now time.Time) string {
	switch {
	case wf == workflowRunning || p.DeletionTimestamp != nil:
		return ""
	case driverpod.Expired(p, now):
		return reasonExpired
	case wf == workflowEnded && !driverpod.Finished(p):
		return reasonWorkflowEnded
	case wf == workflowGone:
		return reasonWorkflowDeleted
	}
	return ""
}

// cleaner deletes the drivers no sidecar will.
type cleaner struct {
	kube     kubernetes.Interface
	meta     metadata.Interface
	recorder record.EventRecorder
	deleted  func(reason string)
	now      func() time.Time
	log      *slog.Logger
}

// sweep looks at every driver in the cache once. The cache only picks
// candidates: a driver whose Workflow the cache has, not completed, is
// left alone without an API request; any other is decided on the
// Workflow as read now, once per workflow a sweep.
func (c *cleaner) sweep(ctx context.Context, w *watch) {
	now := c.now()
	for _, ns := range w.namespaces {
		read := map[types.UID]workflowState{}
		for _, p := range w.drivers(ns) {
			if ctx.Err() != nil {
				return
			}
			wf := driverpod.WorkflowOf(p)
			if p.DeletionTimestamp != nil || !driverpod.OwnDriver(p, wf) {
				continue
			}
			if m := w.workflow(ns, wf.UID); m != nil && m.Labels[argoLabelCompleted] != "true" && m.DeletionTimestamp == nil {
				continue
			}
			if !driverpod.Expired(p, now) && driverpod.Finished(p) && w.workflow(ns, wf.UID) != nil {
				continue // finished, kept until its time to live or its workflow goes
			}
			state, known := read[types.UID(wf.UID)]
			if !known {
				var err error
				if state, err = c.workflowState(ctx, wf); err != nil {
					c.log.Error("cannot read a driver's workflow", "namespace", ns, "workflow", wf.Name, "driver", p.Name, "error", err.Error())
					continue
				}
				read[types.UID(wf.UID)] = state
			}
			if reason := verdict(p, state, now); reason != "" {
				c.delete(ctx, wf, p, reason)
			}
		}
	}
}

// workflowState reads wf's Workflow.
func (c *cleaner) workflowState(ctx context.Context, wf spark.WorkflowRef) (workflowState, error) {
	m, err := c.meta.Resource(workflowsResource).Namespace(wf.Namespace).Get(ctx, wf.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return workflowGone, nil
	case err != nil:
		return workflowRunning, err
	case string(m.UID) != wf.UID:
		return workflowGone, nil
	case m.Labels[argoLabelCompleted] == "true" || m.DeletionTimestamp != nil:
		return workflowEnded, nil
	}
	return workflowRunning, nil
}

// delete deletes driver p for reason, and says so: a log line, the
// metric, and an Event on its Workflow when that still exists.
func (c *cleaner) delete(ctx context.Context, wf spark.WorkflowRef, p *corev1.Pod, reason string) {
	deleted, err := kube.DeletePod(ctx, c.kube, p)
	if err != nil {
		c.log.Error("cannot delete a driver", "namespace", p.Namespace, "driver", p.Name, "reason", reason, "error", err.Error())
		return
	}
	if !deleted {
		return // gone already, or another pod now has its name
	}
	c.deleted(reason)
	node := p.Annotations[spark.AnnotationNodeID]
	var eventReason, why string
	switch reason {
	case reasonExpired:
		eventReason, why = spark.ReasonDriverExpired, "timeToLiveSeconds ran out after the workflow finished"
	case reasonWorkflowEnded:
		eventReason, why = spark.ReasonDriverDeleted, "its workflow ended while no sidecar watched"
	default:
		why = "its workflow is gone"
	}
	c.log.Info("driver deleted: "+why, "namespace", p.Namespace, "workflow", wf.Name, "driver", p.Name, "node", node, "reason", reason)
	if eventReason != "" && c.recorder != nil {
		ref := &corev1.ObjectReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow",
			Namespace: wf.Namespace, Name: wf.Name, UID: types.UID(wf.UID)}
		// The node's id is the pod's annotation, which anyone who may
		// create pods can write: it goes through package redact's rules.
		c.recorder.Event(ref, corev1.EventTypeNormal, eventReason, redact.Value(fmt.Sprintf("deleted driver %s of node %s: %s", p.Name, node, why)))
	}
}
