package execute

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/step"
)

// The choices act leaves to decide, as the passes reconcile runs at once:
// act records what it found and deletes nothing of it; the next pass
// decides, and act carries that out.

// pass is a pass over node wf-1 as reconcile makes one, with its
// snapshot gathered.
func (e *squatEnv) pass(t *testing.T) (*pass, *decide.Snapshot) {
	t.Helper()
	fl := e.core.flowOf("uid-1")
	ts, wf := fl.scope.TaskSet(), fl.scope.WorkflowObject()
	tmpl := ts.Spec.Tasks["wf-1"]
	st, ok, err := fl.step("wf-1", &tmpl, e.core.opts, func(st *step.Step) error { return e.core.admit(st, fl.scope.Workflow, "wf-1") })
	if !ok || err != nil {
		t.Fatalf("step of wf-1: %v %v", ok, err)
	}
	r := e.core.newPass(context.Background(), fl, "wf-1", st, wf, e.core.log)
	return r, r.gather(ts, wf)
}

// deleted reports whether pod name was deleted.
func (e *squatEnv) deleted(name string) bool {
	for _, w := range e.touched(name) {
		if strings.HasPrefix(w, "delete pods ") {
			return true
		}
	}
	return false
}

// A live driver's Service refused when a new process makes sure of its
// companions: act records it with the driver and deletes nothing; the
// next pass keeps a running driver (the refusal said in an Event, its
// companions not checked again) and has one not started deleted and its
// submission counted as refused.
func TestACompanionRefusedIsRecordedThenDecided(t *testing.T) {
	for _, phase := range []corev1.PodPhase{corev1.PodRunning, corev1.PodPending} {
		t.Run(string(phase), func(t *testing.T) {
			e := newSquatEnv(t, "")
			if n := runPass(t, e.core, e.args).Node; n != nil {
				t.Fatalf("the launching pass offered %+v", n)
			}
			ctx := context.Background()
			pods := e.kube.CoreV1().Pods("ns")
			d, err := pods.Get(ctx, e.names.DriverPod, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			d.Status.Phase = phase
			if _, err := pods.UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			// The Service gone while no plugin ran, and no right to make it.
			if err := e.kube.CoreV1().Services("ns").Delete(ctx, e.names.Service, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			e.kube.PrependReactor("create", "services", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, e.names.Service, errorString("no"))
			})
			fl := e.core.flowOf("uid-1")
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				p := fl.scope.Pod(e.names.DriverPod)
				if p != nil && p.Status.Phase == phase && fl.scope.Cached(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: e.names.Service, Namespace: "ns"}}) == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the cache does not show the driver without its Service")
				}
			}
			e.core.companions.mu.Lock()
			e.core.companions.m = nil
			e.core.companions.mu.Unlock()

			r, snap := e.pass(t)
			pl := decide.Decide(snap, r.policy)
			if !pl.Ensure {
				t.Fatalf("plan %+v; want the companions made sure of", pl)
			}
			befell, err := r.act(snap, pl)
			if err != nil || befell == nil || befell.Kind != decide.CompanionRefused || befell.Held || befell.Driver == nil ||
				befell.Driver.Name != e.names.DriverPod || !strings.Contains(befell.Message, "Service "+e.names.Service) {
				t.Fatalf("act: %+v, %v; want the refused Service recorded with its driver", befell, err)
			}
			if e.deleted(e.names.DriverPod) || e.core.failures.of("uid-1", "wf-1")[1].Count != 0 {
				t.Fatal("act deleted the driver or counted a refusal: that is the next pass's to decide")
			}
			if res, said := fl.writer.Wanted("wf-1"); said {
				t.Fatalf("act reported %+v", res)
			}

			snap.Befell, snap.Acted = befell, &pl
			next := decide.Decide(snap, r.policy)
			if befell, err := r.act(snap, next); err != nil || (phase == corev1.PodRunning) != (befell == nil) {
				t.Fatalf("carrying out %+v: %+v, %v", next, befell, err)
			}
			uid := befell.Driver.UID
			if phase == corev1.PodRunning {
				if next.Waive == "" || e.deleted(e.names.DriverPod) || !e.core.companions.has(uid) {
					t.Fatalf("plan %+v; want the running driver kept, its companions not checked again", next)
				}
				found := false
				for len(e.events.Events) > 0 {
					ev := <-e.events.Events
					found = found || strings.HasPrefix(ev, "Warning "+spark.ReasonObjectRefused) && strings.Contains(ev, "of running driver "+e.names.DriverPod+" not made again")
				}
				if !found {
					t.Error("no Event says the running driver runs on without its Service")
				}
				return
			}
			if next.Discard == nil || next.Refuse != 1 || !e.deleted(e.names.DriverPod) || e.core.failures.of("uid-1", "wf-1")[1].Count != 1 {
				t.Fatalf("plan %+v; want the driver not started deleted and its refusal counted", next)
			}
		})
	}
}

// A Service held under the run's name at launch: act records the names
// taken with the driver it made, deleting nothing; the next pass has that
// driver deleted and the attempt launched under names drawn then.
func TestNamesTakenAreRecordedThenDecided(t *testing.T) {
	e := newSquatEnv(t, "")
	squatter := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: e.names.Service, Namespace: "ns"}}
	if err := e.kube.Tracker().Add(squatter); err != nil {
		t.Fatal(err)
	}
	r, snap := e.pass(t)
	pl := decide.Decide(snap, r.policy)
	if pl.Launch != 1 || pl.DrawNames {
		t.Fatalf("plan %+v; want attempt 1 launched under the run's names", pl)
	}
	befell, err := r.act(snap, pl)
	if err != nil || befell == nil || befell.Kind != decide.NamesTaken || befell.Drawn || befell.Driver == nil || befell.Driver.Name != e.names.DriverPod {
		t.Fatalf("act: %+v, %v; want the names taken recorded with the driver made", befell, err)
	}
	if e.deleted(e.names.DriverPod) {
		t.Fatal("act deleted the driver: that is the next pass's to decide")
	}
	snap.Befell, snap.Acted = befell, &pl
	next := decide.Decide(snap, r.policy)
	if !next.DrawNames || next.Launch != 1 || next.Discard == nil {
		t.Fatalf("the next plan %+v; want attempt 1 under drawn names, the driver made deleted", next)
	}
	if befell, err := r.act(snap, next); befell != nil || err != nil {
		t.Fatalf("carrying it out: %+v, %v", befell, err)
	}
	if !e.deleted(e.names.DriverPod) {
		t.Error("the driver under the held names was not deleted")
	}
	pods, err := e.kube.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Name == e.names.DriverPod || pods.Items[0].Annotations[spark.AnnotationNameKey] == "" {
		t.Fatalf("pods %+v (%v); want one driver, under drawn names", pods, err)
	}
}
