package cleanup

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/kube"
	"github.com/sparkplug-io/sparkplug/plugin/redact"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Config is what a Cleaner works with.
type Config struct {
	Kube kubernetes.Interface
	// Dynamic deletes Kueue Workloads; nil where none are watched.
	Dynamic dynamic.Interface
	// Workflow reads a Workflow by namespace and name from the API
	// server: the whole of it (TypedWorkflows) or its metadata.
	Workflow func(ctx context.Context, namespace, name string) (metav1.Object, error)
	// Recorder records the Events on Workflows; nil: none.
	Recorder record.EventRecorder
	// Deleted counts a driver deleted, by its reason (Reason*); nil:
	// not counted.
	Deleted func(reason string)
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// TypedWorkflows reads Workflows whole, with Argo's client.
func TypedWorkflows(c wfclient.Interface) func(context.Context, string, string) (metav1.Object, error) {
	return func(ctx context.Context, ns, name string) (metav1.Object, error) {
		w, err := c.ArgoprojV1alpha1().Workflows(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return w, nil
	}
}

// Cleaner deletes what sparkplug launched once nothing needs it: the
// drivers whose time to live ran out (Expire), the running drivers and
// Workloads of an ending workflow (Sweep), and the leftovers no follower
// of their workflow will delete (Leftovers).
type Cleaner struct {
	Config
	// sweeps are the sweeps of ending workflows in flight.
	sweeps sync.WaitGroup
}

// New returns a Cleaner.
func New(c Config) *Cleaner {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Deleted == nil {
		c.Deleted = func(string) {}
	}
	return &Cleaner{Config: c}
}

// state reads the state of wf's Workflow.
func (c *Cleaner) state(ctx context.Context, wf spark.WorkflowRef) (State, error) {
	if wf.Name == "" {
		return Running, nil // no name to read it by: left alone
	}
	w, err := c.Workflow(ctx, wf.Namespace, wf.Name)
	return StateOf(w, err, wf.UID)
}

// deleteDriver deletes driver p of workflow wf, that very pod (by uid),
// for reason, and says so (why: for people): a log line, the count and
// an Event on the Workflow (none for a Workflow that is gone). A driver
// already gone, or replaced by a pod of its name, is no error and is not
// counted.
func (c *Cleaner) deleteDriver(ctx context.Context, wf spark.WorkflowRef, p *corev1.Pod, reason, why string) error {
	var deleted bool
	var err error
	if reason == ReasonWorkflowEnded {
		// The reason rests on the driver's state as seen (not
		// finished): one that finished since keeps its result.
		deleted, err = kube.DeletePodWhile(ctx, c.Kube, p, func(now *corev1.Pod) bool { return !driverpod.Finished(now) })
	} else {
		deleted, err = kube.DeletePod(ctx, c.Kube, p)
	}
	if err != nil || !deleted {
		return err
	}
	c.Deleted(reason)
	node := p.Annotations[spark.AnnotationNodeID]
	c.Log.Info("driver deleted: "+why, "namespace", p.Namespace, "workflow", wf.Name, "driver", p.Name, "node", node, "reason", reason)
	var eventReason string
	switch reason {
	case ReasonExpired:
		eventReason = spark.ReasonDriverExpired
	case ReasonWorkflowEnded:
		eventReason = spark.ReasonDriverDeleted
	default:
		return nil // no Workflow to record it on
	}
	c.event(wf, corev1.EventTypeNormal, eventReason, fmt.Sprintf("deleted driver %s of node %s: %s", p.Name, node, why))
	return nil
}

func (c *Cleaner) event(wf spark.WorkflowRef, kind, reason, message string) {
	if c.Recorder == nil {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow",
		Namespace: wf.Namespace, Name: wf.Name, UID: types.UID(wf.UID)}
	// The node's id is the pod's annotation, which anyone who may create
	// pods can write, and the API server's words may be quoted: what
	// they hold goes through package redact's rules.
	c.Recorder.Event(ref, kind, reason, redact.Value(message))
}

// DefaultLeftoverInterval is how often a process searches for
// leftovers unless told otherwise (--ttl-leftover-interval).
const DefaultLeftoverInterval = time.Minute

// Loop is the periodic cleanup of one process, which runs it once (Run):
// a sidecar for its workflow and the leftovers of its namespace, the
// monitor's or the controller's leader for the namespaces it serves.
type Loop struct {
	// TTLInterval is how often Expire runs (--ttl-interval).
	TTLInterval time.Duration
	// Expire expires the finished drivers of the workflows the process
	// follows (ExpireAll); nil: it follows none.
	Expire func(context.Context)
	// LeftoverInterval is how often Leftovers runs
	// (--ttl-leftover-interval); 0: every TTLInterval.
	LeftoverInterval time.Duration
	// Leftovers searches for the leftovers of workflows no follower
	// looks after; nil: none.
	Leftovers func(context.Context)
	// SearchFirst searches for leftovers at once, before the first
	// interval: a leader starts from a search.
	SearchFirst bool
}

// Run runs l until ctx is done.
func Run(ctx context.Context, l Loop) {
	if l.LeftoverInterval <= 0 {
		l.LeftoverInterval = l.TTLInterval
	}
	if l.SearchFirst && l.Leftovers != nil {
		l.Leftovers(ctx)
	}
	ttl := time.NewTicker(l.TTLInterval)
	defer ttl.Stop()
	leftovers := time.NewTicker(l.LeftoverInterval)
	defer leftovers.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ttl.C:
			if l.Expire != nil {
				l.Expire(ctx)
			}
		case <-leftovers.C:
			if l.Leftovers != nil {
				l.Leftovers(ctx)
			}
		}
	}
}
