//go:build integration

// The harness of the monitor's integration tests: one real kube-apiserver
// and etcd for the package, with Argo's Workflow CRD and no
// controller-manager, so nothing but the monitor deletes a pod (no
// garbage collector follows a deleted Workflow's ownerReferences). Per
// test an env: a namespace, the monitor's ServiceAccount with the Roles
// it needs and nothing more, Workflows and driver pods as sparkplug
// builds them, and monitors run in-process as that ServiceAccount. Pod
// statuses are set as a kubelet would set them (no container runs here).
// The monitors' side is in harness_monitors_integration_test.go.

package monitor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/cluster"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/templates"
)

var testCluster *cluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{
		BeforeControllers: func(ctx context.Context, c *cluster.Cluster) error {
			dir, err := argo.ModuleDir(ctx, "../..")
			if err != nil {
				return err
			}
			return argo.InstallCRDs(ctx, c, dir, argo.CRDsMinimal, "workflows")
		},
	}, func(c *cluster.Cluster) { testCluster = c }))
}

const serviceAccount = "sparkplug-monitor"

// monitorRules are what the monitor may do in each namespace it watches,
// and leaseRules in the Lease's namespace: what the chart's Roles grant.
var (
	monitorRules = []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch", "delete"}},
		{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"list", "watch", "create", "patch"}},
	}
	leaseRules = []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"sparkplug-monitor"}, Verbs: []string{"get", "update"}},
	}
)

type env struct {
	t          *testing.T
	ns         string
	kubeconfig string
	wfc        wfclient.Interface
	builder    *objects.Builder
}

func newEnv(t *testing.T, ns string) *env {
	t.Helper()
	ctx := context.Background()
	kube := testCluster.Client
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No controller-manager makes the default ServiceAccount the pods
	// run as.
	for _, sa := range []string{serviceAccount, "default"} {
		if err := testCluster.EnsureServiceAccount(ctx, ns, sa); err != nil {
			t.Fatal(err)
		}
	}
	for name, rules := range map[string][]rbacv1.PolicyRule{serviceAccount: monitorRules, serviceAccount + "-leader-election": leaseRules} {
		if _, err := kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: serviceAccount, Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := testCluster.WaitAllowed(ctx, ns, serviceAccount, rules); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testCluster.WriteServiceAccountKubeconfig(ctx, ns, serviceAccount, kubeconfig); err != nil {
		t.Fatal(err)
	}
	builder, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ns: ns, kubeconfig: kubeconfig, wfc: wfclient.NewForConfigOrDie(testCluster.Config), builder: builder}
}

// workflow creates a Workflow with the labels given (Argo's, such as the
// WorkflowTemplate it came from).
func (e *env) workflow(name string, labels map[string]string) spark.WorkflowRef {
	e.t.Helper()
	w, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Create(context.Background(), &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: wfv1.WorkflowSpec{Entrypoint: "main"}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return spark.WorkflowRef{Name: w.Name, Namespace: w.Namespace, UID: string(w.UID)}
}

// complete marks a Workflow ended as Argo's controller does: its phase
// and the completed label.
func (e *env) complete(wf spark.WorkflowRef, phase wfv1.WorkflowPhase) {
	e.t.Helper()
	ctx := context.Background()
	wfs := e.wfc.ArgoprojV1alpha1().Workflows(e.ns)
	// Read again on a conflict: a test's writes race whoever else writes
	// the Workflow.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w, err := wfs.Get(ctx, wf.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if w.Labels == nil {
			w.Labels = map[string]string{}
		}
		w.Labels[spark.ArgoLabelCompleted], w.Labels[argoLabelPhase] = "true", string(phase)
		w.Status.Phase = phase
		_, err = wfs.Update(ctx, w, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) deleteWorkflow(wf spark.WorkflowRef) {
	e.t.Helper()
	if err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Delete(context.Background(), wf.Name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// body is a spark body; extra is YAML merged into it (timeToLiveSeconds,
// driver labels).
func body(extra string) string {
	return `
type: Scala
mode: cluster
image: spark:3.5.3
mainClass: org.apache.spark.examples.SparkPi
mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
sparkVersion: 3.5.3
driver: {cores: 1, memory: 512m, labels: {app-type: etl}}
executor: {cores: 1, instances: 2, memory: 512m}
` + extra
}

// driver creates the driver pod sparkplug builds for node's attempt of
// wf, from a spark body.
func (e *env) driver(wf spark.WorkflowRef, node string, attempt int, sparkBody string) *corev1.Pod {
	e.t.Helper()
	return e.create(e.build(wf, node, attempt, sparkBody))
}

// build is the driver pod sparkplug builds for node's attempt of wf.
func (e *env) build(wf spark.WorkflowRef, node string, attempt int, sparkBody string) *corev1.Pod {
	e.t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(sparkBody))
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := spec.Parse(raw)
	if err != nil {
		e.t.Fatal(err)
	}
	set, err := e.builder.Build(s, objects.Run{Workflow: wf, NodeID: node, TemplateKey: "tmpl", Attempt: attempt})
	if err != nil {
		e.t.Fatal(err)
	}
	return set.Driver
}

// executor creates executor n of driver d, labelled as Spark labels it
// from the driver's spark.kubernetes.executor.label.* and owned by it.
func (e *env) executor(d *corev1.Pod, n int) *corev1.Pod {
	e.t.Helper()
	labels := map[string]string{spark.LabelRole: spark.RoleExecutor, spark.LabelExecID: fmt.Sprint(n)}
	for _, k := range []string{spark.LabelAppSelector, spark.LabelWorkflowUID, spark.LabelNode, spark.LabelTemplate, spark.LabelAttempt, spark.LabelManagedBy} {
		labels[k] = d.Labels[k]
	}
	return e.create(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-exec-%d", objects.RunName(d.Name), n), Namespace: e.ns, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: d.Name, UID: d.UID}}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: spark.ExecutorContainerName, Image: "spark:3.5.3"}}},
	})
}

func (e *env) create(p *corev1.Pod) *corev1.Pod {
	e.t.Helper()
	created, err := testCluster.Client.CoreV1().Pods(e.ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

// setStatus changes a pod's status as a kubelet would. It reads and
// writes again on a conflict: the monitor writes pods (it deletes them)
// meanwhile.
func (e *env) setStatus(p *corev1.Pod, change func(*corev1.PodStatus)) {
	e.t.Helper()
	if err := testCluster.SetPodStatus(context.Background(), e.ns, p.Name, change); err != nil {
		e.t.Fatal(err)
	}
}

// The statuses a kubelet (and the scheduler) would write.
func scheduledNow(s *corev1.PodStatus) {
	s.Conditions = append(s.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()})
}

func runningNow(s *corev1.PodStatus) {
	r := cluster.Running(spark.DriverContainerName, true)
	s.Phase, s.ContainerStatuses = r.Phase, r.ContainerStatuses
}

func exited(code int32, finishedAgo time.Duration) func(*corev1.PodStatus) {
	return func(s *corev1.PodStatus) {
		phase := map[bool]corev1.PodPhase{true: corev1.PodSucceeded, false: corev1.PodFailed}[code == 0]
		finished := time.Now().Add(-finishedAgo)
		t := cluster.Terminated(spark.DriverContainerName, phase, code, "", "", finished.Add(-time.Minute), finished)
		s.Phase, s.ContainerStatuses = t.Phase, t.ContainerStatuses
	}
}

func podPhase(p corev1.PodPhase) func(*corev1.PodStatus) {
	return func(s *corev1.PodStatus) { s.Phase = p }
}

// gone waits until the pod no longer exists.
func (e *env) gone(p *corev1.Pod, what string) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := testCluster.Client.CoreV1().Pods(e.ns).Get(ctx, p.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		e.t.Fatalf("%s: pod %s was not deleted", what, p.Name)
	}
}

func (e *env) exists(p *corev1.Pod) bool {
	e.t.Helper()
	got, err := testCluster.Client.CoreV1().Pods(e.ns).Get(context.Background(), p.Name, metav1.GetOptions{})
	return err == nil && got.UID == p.UID
}

// events are the Events of reason on Workflow wf, their messages.
func (e *env) events(wf spark.WorkflowRef, reason string) []string {
	e.t.Helper()
	list, err := testCluster.Client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Workflow,involvedObject.name=" + wf.Name + ",reason=" + reason})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		out = append(out, ev.Message)
	}
	return out
}

// eventuallyEvent waits for an Event of reason on wf whose message has
// want.
func (e *env) eventuallyEvent(wf spark.WorkflowRef, reason, want string) {
	e.t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		got = e.events(wf, reason)
		return len(got) > 0 && strings.Contains(strings.Join(got, "\n"), want), nil
	})
	if err != nil {
		e.t.Fatalf("no Event %s on workflow %s saying %q; got %q", reason, wf.Name, want, got)
	}
}

// submissionFailed records the Event the sidecar records for a refused
// submission, with count, or raises the count of the one recorded.
func (e *env) submissionFailed(wf spark.WorkflowRef, name string, count int32) {
	e.t.Helper()
	ctx := context.Background()
	events := testCluster.Client.CoreV1().Events(e.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ev, err := events.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = events.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name},
				InvolvedObject: corev1.ObjectReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Namespace: e.ns, Name: wf.Name, UID: typesUID(wf.UID)},
				Reason:         spark.ReasonSubmissionFailed, Type: corev1.EventTypeWarning, Count: count, Message: "SUBMISSION_FAILED: quota",
				Source: corev1.EventSource{Component: "sparkplug"}, FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now()}, metav1.CreateOptions{})
		} else if err == nil {
			ev.Count = count
			_, err = events.Update(ctx, ev, metav1.UpdateOptions{})
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}
