package execute

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
)

// createDriver creates the driver pod natively. A pod found under its
// name is taken if it is the run's (a repeated pass, a restarted plugin);
// one that is not is returned as taken, named as a forgery, and left as it
// is.
func (r *pass) createDriver(objs *objects.Set, o launchOrder) (created, taken *corev1.Pod, out *decide.Befell) {
	pods := r.core.clients.Kube.CoreV1().Pods(r.wf.Namespace)
	created, err := pods.Create(r.ctx, objs.Driver, metav1.CreateOptions{})
	switch {
	case err == nil:
		r.log.Info("driver pod created", "driver", created.Name, "attempt", o.attempt)
		r.core.metrics.Driver("launched", "")
		return created, nil, nil
	case apierrors.IsAlreadyExists(err):
		found, err := pods.Get(r.ctx, objs.Driver.Name, metav1.GetOptions{})
		if err != nil {
			return nil, nil, r.transient("get existing driver pod %s: %s", objs.Driver.Name, err)
		}
		why := ""
		if !driverpod.Own(found, r.wf, objs.Driver.Name) {
			why = "it is not this workflow's driver under the name sparkplug gives it"
		} else {
			why = forgery(found, r.record, r.started, r.core.launched.has)
		}
		if why != "" {
			r.forged("pod", found.Name, found.UID, why)
			return nil, found, nil
		}
		r.log.Info("driver pod already existed; continuing with it", "driver", found.Name)
		return found, nil, nil
	case isTransient(err):
		return nil, nil, r.transient("create driver pod %s: %s", objs.Driver.Name, err)
	default:
		r.withdrawPodGroup(objs.PodGroup)
		return nil, nil, r.rejected(o.attempt, apiMessage(err))
	}
}

// launched is the end of a launch, err what making the driver's
// companions gave; a companion refused is recorded with the driver made,
// whose fate is decide's.
func (r *pass) launched(created *corev1.Pod, err error, o launchOrder) (*corev1.Pod, *decide.Befell) {
	if err != nil {
		if failsAttempt(err) {
			return nil, companionRefused(o.attempt, created, err)
		}
		return nil, r.transient("%s", err)
	}
	// Counted until the whole launch went through: a driver whose
	// companions are refused is a refused submission too.
	r.core.failures.clear(r.wf.UID, r.node, o.attempt)
	return created, nil
}

// launchOrder is one attempt of a node to launch.
type launchOrder struct {
	node    string
	attempt int
}
