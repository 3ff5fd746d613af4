//go:build integration

package main

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
)

// setServiceQuota limits the namespace to n Services, and waits until the
// quota controller has counted its usage (until then the API server
// refuses every Service).
func (e *env) setServiceQuota(n int64) {
	e.t.Helper()
	ctx := context.Background()
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "services"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceServices: *resource.NewQuantity(n, resource.DecimalSI)}},
	}
	if _, err := testCluster.Client.CoreV1().ResourceQuotas(e.ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		q, err := testCluster.Client.CoreV1().ResourceQuotas(e.ns).Get(ctx, "services", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, counted := q.Status.Used[corev1.ResourceServices]
		return counted, nil
	})
	if err != nil {
		e.t.Fatalf("the quota was never counted: %v", err)
	}
}

// The driver's Service over the namespace's quota: the driver could never
// work, so the attempt is a refused submission with the API server's own
// words, and the driver is deleted, not left Pending forever.
func TestAQuotaRefusingTheDriversServiceFailsTheNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "quota-driver-service")
	e.setServiceQuota(0)
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed ||
		!strings.HasPrefix(r.Node.Message, "SUBMISSION_FAILED: create Service ") || !strings.Contains(r.Node.Message, "exceeded quota") {
		t.Fatalf("result %s; want Failed SUBMISSION_FAILED naming the Service and the quota", describe(r))
	}
	for _, d := range e.drivers() {
		if !e.deleted(d.Name) {
			t.Errorf("driver %s of the refused launch is still there", d.Name)
		}
	}
	// Without onSubmissionFailureRetries the refusal stands: no second try
	// once the default retry interval (5s) has passed.
	e.waitEvent("SparkSubmissionFailed", "exceeded quota")
	time.Sleep(6 * time.Second)
	if n := e.countEvents("SparkSubmissionFailed"); n != 1 {
		t.Errorf("%d refused submissions, want 1: a submission without retries was tried again", n)
	}
}

// countEvents counts the Events on the Workflow with that reason, a
// repeated one as often as it was recorded.
func (e *env) countEvents(reason string) int32 {
	e.t.Helper()
	evs, err := testCluster.Client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.kind=Workflow,involvedObject.name=" + e.wf.Name + ",reason=" + reason})
	if err != nil {
		e.t.Fatal(err)
	}
	var n int32
	for _, ev := range evs.Items {
		n += max(ev.Count, 1)
	}
	return n
}

// The UI's Service over the quota: the application runs without it. The
// node is not stuck or failed; a Warning Event says what is missing.
func TestAQuotaRefusingTheUIServiceLeavesTheRunAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "quota-ui-service")
	e.setServiceQuota(1) // the driver's Service, not the UI's
	tmpl := template(t, "spark-pi", sparkPi+"sparkUIOptions: {}\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending {
		t.Fatalf("reply %s; want Pending", describe(r))
	}
	d := e.onlyDriver()
	if _, err := testCluster.Client.CoreV1().Services(e.ns).Get(context.Background(), objects.ServiceName(d.Name), metav1.GetOptions{}); err != nil {
		t.Fatalf("the driver's Service: %v", err)
	}
	e.setDriverStatus(d.Name, running(true))
	e.eventually(tmpl, "running without its UI Service", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	e.eventually(tmpl, "succeeded without its UI Service", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	if e.deleted(d.Name) {
		t.Fatal("the driver was deleted")
	}
	e.waitEvent("SparkObjectRefused", objects.UIServiceName(d.Name)+" of driver "+d.Name+" not created")
}

// A Role that may create a PodGroup but not patch it (to hand it to the
// driver): the group works as it is, owned by the Workflow, and the run
// goes on; a Warning Event says so. It used to answer 503 on every poll.
func TestARefusedPodGroupHandoverLeavesTheRunAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "podgroup-no-patch")
	e.updateRole(func(role *rbacv1.Role) {
		for i, r := range role.Rules {
			if slices.Contains(r.Resources, "podgroups") {
				role.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(r.Verbs), func(v string) bool { return v == "patch" })
			}
		}
	})
	tmpl := template(t, "spark-pi", sparkPi+"batchScheduler: kube-scheduler\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	if r := e.execute(tmpl); r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMITTED") {
		t.Fatalf("reply %s; want the driver submitted", describe(r))
	}
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, running(true))
	e.eventually(tmpl, "running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
	name := podGroupName(d)
	pg, err := e.podGroup(schedulerPluginsPodGroups, name)
	if err != nil {
		t.Fatalf("PodGroup %s: %v", name, err)
	}
	if refs := pg.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != e.wf.UID {
		t.Errorf("PodGroup owners %+v, want the Workflow still", refs)
	}
	e.waitEvent("SparkObjectRefused", "PodGroup "+name)
}

// waitEvent waits for an Event on the Workflow with that reason whose
// message contains text.
func (e *env) waitEvent(reason, text string) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := testCluster.Client.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Workflow,involvedObject.name=" + e.wf.Name})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.Reason == reason && strings.Contains(ev.Message, text) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("no Event %s on the Workflow mentioning %q: %v", reason, text, err)
	}
}

// A refused launch is retried as onSubmissionFailureRetries and
// onSubmissionFailureRetryInterval say, counted once per try: the deleted
// driver, which the cache shows for a moment, is not refused again.
func TestARefusedLaunchIsRetriedAsTheSpecSays(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "quota-retries")
	e.setServiceQuota(0)
	tmpl := template(t, "spark-pi", sparkPi+"restartPolicy:\n  type: OnFailure\n  onSubmissionFailureRetries: 2\n  onSubmissionFailureRetryInterval: 2\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	// The first refusal, to be retried ("soon", or, once the next pass
	// has looked, "in" the interval's time left).
	start := time.Now()
	first := regexp.MustCompile(`^SUBMISSION_FAILED: retry 1/2 (soon|in \d+s): create Service `)
	if r := e.execute(tmpl); r.Node == nil || r.Node.Phase != wfv1.NodePending || !first.MatchString(r.Node.Message) {
		t.Fatalf("first result %s; want the first refusal, to be retried", describe(r))
	}
	// The retries' own messages change the message only (Pending still):
	// they are written at most once per progress interval, so the entry
	// may not show them; the Events below count the tries.
	r := e.eventuallyNode("node-1", "failed after the retries", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if !strings.HasPrefix(r.Node.Message, "SUBMISSION_FAILED: create Service ") {
		t.Errorf("final result %s; want the API server's refusal", describe(r))
	}
	// The intervals are linear: 2s after the first refusal, 4s after the
	// second.
	if took := time.Since(start); took < 6*time.Second {
		t.Errorf("failed %s after the first refusal; the retries' intervals add up to 6s", took.Round(time.Millisecond))
	}
	// Each refused try is an Event (what sparkplug monitor counts as
	// spark_application_failed_submission_count): 1 + 2 retries.
	e.waitEvent("SparkSubmissionFailed", "exceeded quota")
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		return e.countEvents("SparkSubmissionFailed") == 3, nil
	})
	if err != nil {
		t.Errorf("want 3 SparkSubmissionFailed Events (one per refused try): %v", err)
	}
}

// After a restart, a running driver whose Service is gone and may not be
// made again (a quota now) runs on: it started with what it needed. The
// node follows it; a Warning Event says what is missing.
func TestARunningDriverSurvivesARefusedCompanionAfterARestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "quota-after-restart")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, running(true))
	e.eventually(tmpl, "running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
	if err := testCluster.Client.CoreV1().Services(e.ns).Delete(context.Background(), objects.ServiceName(d.Name), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.setServiceQuota(0)

	e.stop()
	if r := e.at(startAnotherServer(t, e)).execute(tmpl); r.Node == nil || r.Node.Phase != wfv1.NodeRunning {
		t.Fatalf("after the restart: %s; want Running", describe(r))
	}
	if e.deleted(d.Name) {
		t.Fatal("the running driver was deleted")
	}
	e.waitEvent("SparkObjectRefused", "of running driver "+d.Name+" not made again")
}
