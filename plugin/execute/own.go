package execute

// What a run's own object is: companions found under a run's name are
// taken only when driverpod.NotOurs says they are the run's.

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
)

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
