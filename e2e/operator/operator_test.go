//go:build bench

package operator

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// appIDPattern is the application id the fake spark-submit gives a driver.
var appIDPattern = regexp.MustCompile(`^spark-[0-9a-f]{32}$`)

// milestones are when the test first saw an application's driver pod and
// states, from its creation.
type milestones struct {
	created        time.Time
	pod, completed time.Duration
	states         []string
}

// The operator, started with its defaults on the e2e control plane, takes
// SparkApplications through spark-submit (the fake) to COMPLETED: each
// driver pod is the fake spark-submit's, carries the labels the operator
// follows it by, and moves by the e2e Stages as sparkplug's drivers do.
//
// A smoke test of the benchmark's operator column (tag bench, not part of
// make test). Run it alone: it starts the whole e2e environment.
func TestOperatorCompletesSparkApplications(t *testing.T) {
	const apps = 3
	run := 3 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()

	e, err := framework.Start(ctx, framework.Options{Progress: os.Stderr, KeepDir: os.Getenv("SPARKPLUG_E2E_KEEP") != ""})
	if err != nil {
		t.Fatalf("start the e2e environment: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			e.DumpLogs(os.Stderr, 40)
		}
		if err := e.Stop(); err != nil {
			t.Errorf("stop the e2e environment: %v", err)
		}
	})
	start := time.Now()
	binDir, sparkHome, err := Build(ctx, e.RepoRoot)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("hack/operator.sh build: %s; spark-operator %s", time.Since(start).Round(time.Millisecond), Version(ctx, binDir))
	start = time.Now()
	op, err := Start(ctx, e.Cluster, binDir, sparkHome, e.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			fmt.Fprintf(os.Stderr, "===== spark-operator: last 60 lines of %s\n%s\n", op.LogPath(), op.LogTail(60))
		}
		if err := op.Stop(); err != nil {
			t.Errorf("stop spark-operator: %v", err)
		}
	})
	t.Logf("spark-operator ready in %s (CRDs installed, workers started); log %s", time.Since(start).Round(time.Millisecond), op.LogPath())

	res := e.Cluster.Dynamic.Resource(SparkApplicationResource).Namespace(e.Namespace)
	seen := map[string]*milestones{}
	var mu sync.Mutex
	for i := 1; i <= apps; i++ {
		name := fmt.Sprintf("pi-%d", i)
		app := SparkApplication(name, e.Namespace, sim.Succeed(run).Annotations())
		m := &milestones{created: time.Now()}
		if _, err := res.Create(ctx, app, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create SparkApplication %s: %v", name, err)
		}
		mu.Lock()
		seen[name] = m
		mu.Unlock()
	}

	// Poll at 50 ms: the milestones' resolution.
	last := map[string]*unstructured.Unstructured{}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		now := time.Now()
		pods, err := e.Kube.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelLaunchedBy + "=true," + spark.LabelRole + "=" + spark.RoleDriver})
		if err != nil {
			return false, nil
		}
		list, err := res.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		mu.Lock()
		defer mu.Unlock()
		for _, p := range pods.Items {
			if m := seen[p.Labels[LabelAppName]]; m != nil && m.pod == 0 {
				m.pod = now.Sub(m.created)
			}
		}
		done := 0
		for i := range list.Items {
			app := &list.Items[i]
			m := seen[app.GetName()]
			if m == nil {
				continue
			}
			last[app.GetName()] = app
			if s := State(app); s != "" && (len(m.states) == 0 || m.states[len(m.states)-1] != s) {
				m.states = append(m.states, s)
			}
			if Terminal(app) {
				if m.completed == 0 {
					m.completed = now.Sub(m.created)
				}
				done++
			}
		}
		return done == apps, nil
	})
	if err != nil {
		for name, app := range last {
			t.Logf("%s: state %q (%s), seen %v", name, State(app), ErrorMessage(app), seen[name].states)
		}
		t.Fatalf("wait for %d SparkApplications to end: %v", apps, err)
	}

	for i := 1; i <= apps; i++ {
		name := fmt.Sprintf("pi-%d", i)
		app, m := last[name], seen[name]
		t.Run(name, func(t *testing.T) {
			if State(app) != StateCompleted {
				t.Fatalf("state %s (%s), want %s; states seen %v", State(app), ErrorMessage(app), StateCompleted, m.states)
			}
			checkDriver(ctx, t, e, app)
			executors, _, _ := unstructured.NestedStringMap(app.Object, "status", "executorState")
			t.Logf("from creation: driver pod seen after %s, %s after %s; states seen %v; executors %v",
				m.pod.Round(time.Millisecond), StateCompleted, m.completed.Round(time.Millisecond), m.states, executors)
		})
	}
}

// checkDriver checks that app's driver pod is the fake spark-submit's, as
// the operator asked for it, and that it ran and succeeded.
func checkDriver(ctx context.Context, t *testing.T, e *framework.Env, app *unstructured.Unstructured) {
	t.Helper()
	name := DriverPodName(app)
	if name != app.GetName()+"-driver" {
		t.Errorf("status.driverInfo.podName %q, want the operator's default %s-driver", name, app.GetName())
	}
	pod, err := e.Kube.CoreV1().Pods(app.GetNamespace()).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("driver pod: %v", err)
	}
	// Created by the fake, whose client-go names itself after its binary.
	var managers []string
	for _, f := range pod.ManagedFields {
		if f.Operation == metav1.ManagedFieldsOperationUpdate && f.Subresource == "" {
			managers = append(managers, f.Manager)
		}
	}
	if len(managers) != 1 || managers[0] != "spark-submit" {
		t.Errorf("driver pod written by %v, want spark-submit (the fake) alone", managers)
	}
	id, _, _ := unstructured.NestedString(app.Object, "status", "sparkApplicationId")
	for k, want := range map[string]string{
		spark.LabelRole:   spark.RoleDriver,
		LabelLaunchedBy:   "true",
		LabelAppName:      app.GetName(),
		LabelSubmissionID: SubmissionID(app),
	} {
		if pod.Labels[k] != want || want == "" {
			t.Errorf("driver label %s=%q, want %q", k, pod.Labels[k], want)
		}
	}
	if got := pod.Labels[spark.LabelAppSelector]; !appIDPattern.MatchString(got) || got != id {
		t.Errorf("driver's application id %q, status.sparkApplicationId %q: want the fake's spark-<32 hex>, equal", got, id)
	}
	for k, v := range sim.Succeed(time.Second).Annotations() {
		if _, ok := pod.Annotations[k]; !ok {
			t.Errorf("driver lacks annotation %s (%s) of spec.driver.annotations", k, v)
		}
	}
	if pod.Status.Phase != corev1.PodSucceeded {
		t.Errorf("driver phase %s, want %s", pod.Status.Phase, corev1.PodSucceeded)
	}
	// Spark's conf volume and ConfigMap, owned by the pod, whose
	// spark.properties the executor simulation reads.
	var cm string
	for _, v := range pod.Spec.Volumes {
		if v.Name == spark.ConfVolumeName && v.ConfigMap != nil {
			cm = v.ConfigMap.Name
		}
	}
	if cm == "" {
		t.Fatalf("driver has no %s volume: %+v", spark.ConfVolumeName, pod.Spec.Volumes)
	}
	conf, err := e.Kube.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, cm, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		t.Fatalf("driver's ConfigMap %s does not exist", cm)
	}
	if err != nil {
		t.Fatal(err)
	}
	if refs := conf.OwnerReferences; len(refs) != 1 || refs[0].UID != pod.UID {
		t.Errorf("ConfigMap %s owners %+v, want the driver", cm, refs)
	}
	props := conf.Data[spark.PropertiesFile]
	for _, want := range []string{"spark.app.id=" + id, "spark.executor.instances=1", "spark.kubernetes.driver.pod.name=" + name} {
		if !strings.Contains(props, want+"\n") {
			t.Errorf("%s lacks %s:\n%s", spark.PropertiesFile, want, props)
		}
	}
}
