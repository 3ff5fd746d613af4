package decide

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// Snapshot is everything one decision about one Argo node reads, as one
// plain value: the node's entry in the WorkflowTaskSet, what the Workflow
// shows of it, its run in the current incarnation, and the submission
// failures kept in memory. The act side gathers it from its caches; Decide
// reads it and nothing else.
type Snapshot struct {
	Now time.Time
	// NodeID is the Argo node the decision is about.
	NodeID string
	// EntryPhase is the phase of the node's result in the TaskSet's
	// status.nodes, whoever wrote it; empty when there is none.
	EntryPhase state.Phase
	// Fulfilled: the Workflow shows the node fulfilled (a final phase),
	// which it may for a moment while the TaskSet still lists it.
	Fulfilled bool
	// InLoop: the node is a loop's child, or an attempt of one, whose
	// result Argo reads as JSON (scope.InLoop of the Workflow's
	// nodes). LoopKnown is false while the Workflow's nodes do not list
	// the node (a view that lags).
	InLoop, LoopKnown bool
	// FinalRemoved: the node's entry was final in this incarnation (this
	// process wrote or saw it) and is gone since a moment, less than the
	// hold of a vanished entry: Argo removed it, and its Workflow will
	// show the node fulfilled. Past the hold, with the Workflow still
	// showing the node open, Argo's update was lost and the node is
	// decided again.
	FinalRemoved bool
	// Started is when the Workflow shows the node started (zero: it does
	// not show it), from which the template's timeout counts.
	Started time.Time
	// Run is the node's run in the current incarnation; nil: none yet.
	Run *Run
	// Failures are the refused submissions of the node's attempts, by
	// attempt.
	Failures map[int]Failure
	// Progress is what Spark's REST API last said of the newest driver's
	// running job ("stage 4/7, 1,200/3,000 tasks"; "": nothing).
	Progress string
	// Befell is what befell an action of the pass just before (nil: it
	// acted without one, or there was none): this pass decides what the
	// node reports of it, and what is done of the rest of Acted
	// (befell.go).
	Befell *Befell
	// Acted is the plan of the pass just before, carried out up to the
	// action Befell tells of (nil without Befell).
	Acted *Plan
	// Archiving: an upload of the newest driver's log is in flight.
	Archiving bool
	// Workloads are the node's Kueue Workloads (a queued step's), every
	// attempt's and incarnation's still in the cluster.
	Workloads []Workload
	// WorkloadsKnown: Workloads is all there is (the cache synced).
	WorkloadsKnown bool
}

// Failure counts the refused submissions of one attempt.
type Failure struct {
	Count   int
	At      time.Time
	Message string
}

// Run is every attempt launched for one node in one incarnation, oldest
// first.
type Run struct {
	Attempts []*corev1.Pod
	// Ghost: the newest driver is gone from the cluster. Its name and
	// attempt come from the result written for the node, and MissingSince
	// from when this process first missed it.
	Ghost        bool
	MissingSince time.Time
	// Tomb: the newest driver was stopped by sparkplug; the head is a
	// stand-in built from its tombstone ConfigMap.
	Tomb *corev1.ConfigMap
	// Executors are the newest driver's executor pods.
	Executors []*corev1.Pod
}

// Head is the newest attempt's driver (or its stand-in).
func (rn *Run) Head() *corev1.Pod { return rn.Attempts[len(rn.Attempts)-1] }

// Attempt is the newest attempt's number.
func (rn *Run) Attempt() int { return driverpod.Attempt(rn.Head()) }

// ObservedHead is the newest driver as observed: nil for a ghost or a
// tombstone.
func (rn *Run) ObservedHead() *corev1.Pod {
	if rn.Ghost || rn.Tomb != nil {
		return nil
	}
	return rn.Head()
}

// Live: the newest driver exists and has not finished.
func (rn *Run) Live() bool {
	return !rn.Ghost && rn.Tomb == nil && !driverpod.Finished(rn.Head())
}

// Policy is what a decision applies besides the snapshot: the step's body
// and timeout, and the plugin's settings.
type Policy struct {
	Body *spec.SparkApplicationSpec
	// Timeout is the template's timeout over the whole run; 0 is none.
	Timeout time.Duration
	// NotFoundGrace is how long a driver missing from the cache is
	// tolerated before the attempt fails.
	NotFoundGrace time.Duration
	// ProgressInterval is the step of the elapsed time a RUNNING message
	// shows (state.Elapsed); 0: none.
	ProgressInterval time.Duration
	// KueueQueue is the Kueue LocalQueue the step waits in before each
	// attempt ("": the step is not queued).
	KueueQueue string
	// SparkSubmit: the step's driver is created by spark-submit
	// (spec.SparkApplicationSpec.LauncherFor the plugin's launcher), which
	// launches under the run's own names only.
	SparkSubmit bool
}
