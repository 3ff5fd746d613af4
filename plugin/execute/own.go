package execute

// What a run's own object is: the driver ConfigMap checked before its
// driver exists, and companions found under a run's name taken only when
// driverpod.NotOurs says they are the run's.

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// confBeforeDriver refuses a launch whose driver ConfigMap exists before
// its driver: the driver would mount it at once, and run its
// spark.properties (JVM options, jars) before companions could refuse it
// and delete the driver. One made in advance by someone else is owned by
// no pod of the driver's name; it fails the attempt. One the live pod of
// that name owns is the run's own (companions checks it against the
// driver's uid); one an earlier pod of that name owned is waited for,
// until the garbage collector has removed it. This is one read per
// launch, two when the ConfigMap exists.
func (r *pass) confBeforeDriver(objs *objects.Set, o launchOrder) *state.Outcome {
	cm, err := r.get(objs.ConfigMap)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil && isTransient(err):
		return r.transient("read ConfigMap %s before its driver: %s", objs.ConfigMap.Name, err)
	case err != nil:
		// Forbidden: a Role without get on ConfigMaps (rbac.yaml has it).
		return r.rejected(o.attempt, fmt.Sprintf("read ConfigMap %s before its driver: %s", objs.ConfigMap.Name, apiMessage(err)))
	}
	if refs := cm.GetOwnerReferences(); len(refs) == 1 && refs[0].Kind == "Pod" && refs[0].Name == objs.Driver.Name {
		// A pod of the driver's name owns it: the driver that runs (found
		// when its create says it exists), or an earlier try of it, gone
		// (deleted after a refused companion), whose ConfigMap the garbage
		// collector removes in a moment. The driver is not made until it
		// has: made now, it would mount that ConfigMap. One that only
		// looks so (the run's labels copied, a made-up uid) is removed by
		// the garbage collector all the same, its owner being no pod.
		if err := driverpod.NotTheRunsLabels(cm, objs.ConfigMap.Name, objs.ConfigMap.Labels); err != nil {
			return r.rejected(o.attempt, (&squattedError{what: "ConfigMap " + objs.ConfigMap.Name, why: err}).Error())
		}
		driver, err := r.core.clients.Kube.CoreV1().Pods(r.wf.Namespace).Get(r.ctx, objs.Driver.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) || (err == nil && driver.UID != refs[0].UID):
			return r.transient("ConfigMap %s is left from an earlier try of driver %s, which is gone: waiting for the garbage collector to remove it", objs.ConfigMap.Name, objs.Driver.Name)
		case err != nil:
			return r.transient("read driver pod %s: %s", objs.Driver.Name, err)
		}
		return nil
	}
	return r.rejected(o.attempt, (&squattedError{what: "ConfigMap " + objs.ConfigMap.Name,
		why: fmt.Errorf("it exists before driver %s, and no earlier pod of that name alone owns it", objs.Driver.Name)}).Error())
}

// squattedError is an object found under the name sparkplug gives one of
// a run's objects that is not the run's (driverpod.NotOurs says why):
// made in advance by someone who may create such objects, it would put
// their spark.properties into the driver, or their selector behind its
// Service. It is left as it is, and the attempt fails, whether or not
// the driver runs already.
type squattedError struct {
	what string
	why  error
}

func (e *squattedError) Error() string {
	return e.what + " exists and is not this run's: " + e.why.Error() +
		"; sparkplug neither uses nor changes it: find who made it, delete it, and retry"
}

// ours is nil when found, an object of want's kind and name, is the run's
// object want describes: want's labels and one of its owners
// (driverpod.NotOurs, the one rule); else a squattedError.
func ours(found metav1.Object, want objects.Object) error {
	if err := driverpod.NotOurs(found, want.GetName(), want.GetLabels(), want.GetOwnerReferences()...); err != nil {
		return &squattedError{what: kindOf(want) + " " + want.GetName(), why: err}
	}
	return nil
}

// existing checks a companion whose create found one of its name: ours,
// or the attempt fails.
func (r *pass) existing(o objects.Object) error {
	found, err := r.get(o)
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return ours(found, o)
	case isTransient(err) || apierrors.IsNotFound(err) || !errors.As(err, &status):
		// Gone meanwhile, or a hiccup: the next pass looks again.
		return fmt.Errorf("get existing %s %s: %w", kindOf(o), o.GetName(), err)
	default:
		// Forbidden: a Role without get (rbac.yaml has it).
		return &refusedError{what: kindOf(o) + " " + o.GetName(), err: err}
	}
}

// kindOf names an object's kind for messages.
func kindOf(o objects.Object) string {
	if k := o.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	t := fmt.Sprintf("%T", o)
	return t[strings.LastIndex(t, ".")+1:]
}
