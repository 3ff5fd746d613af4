//go:build integration

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/submit/submittest"
)

// The batch schedulers' PodGroup CRDs, as their projects publish them.
const (
	crdDir            = "../../plugin/objects/testdata/crds"
	volcanoCRD        = "podgroups.scheduling.volcano.sh"
	volcanoCRDFile    = "scheduling.volcano.sh_podgroups.yaml"
	schedulerPluginsF = "scheduling.x-k8s.io_podgroups.yaml"
)

var (
	volcanoPodGroups          = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}
	schedulerPluginsPodGroups = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}
	crds                      = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// installCRD installs a PodGroup CRD. scheduler-plugins' is installed
// before the controllers start (TestMain), so that the garbage collector
// knows the kind from its start; Volcano's by the test that first shows
// what happens without it.
func installCRD(ctx context.Context, c *cluster.Cluster, file string) error {
	b, err := os.ReadFile(filepath.Join(crdDir, file))
	if err != nil {
		return err
	}
	if err := c.Apply(ctx, b); err != nil {
		return fmt.Errorf("install %s: %w", file, err)
	}
	return nil
}

// removeCRD deletes a CRD and waits until its resource is no longer served
// (a test run again in the same process finds it installed).
func removeCRD(t *testing.T, name string, gvr schema.GroupVersionResource) {
	t.Helper()
	ctx := context.Background()
	dyn := testCluster.Dynamic
	if err := dyn.Resource(crds).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("CRD %s still served", name)
	}
}

func (e *env) podGroup(gvr schema.GroupVersionResource, name string) (*unstructured.Unstructured, error) {
	return testCluster.Dynamic.Resource(gvr).Namespace(e.ns).Get(context.Background(), name, metav1.GetOptions{})
}

// checkPodGroup checks the PodGroup of a driver: made by sparkplug for
// the run, owned by the driver, of the spec the Spark operator gives it.
func checkPodGroup(t *testing.T, pg *unstructured.Unstructured, d corev1.Pod, wantSpec map[string]any) {
	t.Helper()
	if refs := pg.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].UID != d.UID || refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("PodGroup owners %+v, want the driver %s", refs, d.UID)
	}
	if pg.GetLabels()[spark.LabelWorkflowUID] != d.Labels[spark.LabelWorkflowUID] || pg.GetLabels()[spark.LabelAppSelector] != d.Labels[spark.LabelAppSelector] {
		t.Errorf("PodGroup labels %v, want the run's", pg.GetLabels())
	}
	for k, want := range wantSpec {
		got, _, err := unstructured.NestedFieldNoCopy(pg.Object, "spec", k)
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := want.(map[string]string); ok {
			for name, q := range m {
				v, _, _ := unstructured.NestedString(pg.Object, "spec", k, name)
				if a, b := resource.MustParse(v), resource.MustParse(q); a.Cmp(b) != 0 {
					t.Errorf("spec.%s.%s = %q, want %s", k, name, v, q)
				}
			}
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("spec.%s = %v, want %v", k, got, want)
		}
	}
}

// conf is the driver's spark.properties, which the executors' metadata
// comes from.
func (e *env) conf(d corev1.Pod) string {
	e.t.Helper()
	cm, err := testCluster.Client.CoreV1().ConfigMaps(e.ns).Get(context.Background(), objects.ConfigMapOf(&d), metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return cm.Data[spark.PropertiesFile]
}

// batchScheduler volcano: without Volcano's CRD the node fails at once,
// naming the fix, and no driver is made; with it, the PodGroup exists
// before the driver and is handed to the driver, whose pods name it; a
// driver the API server refuses leaves no PodGroup behind.
func TestVolcanoPodGroup(t *testing.T) {
	// Not parallel: it removes and installs Volcano's PodGroup CRD,
	// which the whole cluster sees.
	removeCRD(t, volcanoCRD, volcanoPodGroups) // the cluster starts without it
	body := sparkPi + "batchScheduler: volcano\nbatchSchedulerOptions:\n  queue: etl\n"

	// Given no CRD, When the step runs, Then it fails with the fix.
	e := newEnv(t, "volcano-missing")
	tmpl := template(t, "spark-pi", body)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	want := "SUBMISSION_FAILED: batchScheduler volcano needs Volcano's PodGroup CRD (scheduling.volcano.sh/v1beta1) in the cluster: install Volcano, or remove spark.batchScheduler"
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || r.Node.Message != want {
		t.Fatalf("without the CRD: %s; want Failed %q", describe(r), want)
	}
	if n := len(e.drivers()); n != 0 {
		t.Fatalf("%d drivers without the CRD, want none", n)
	}

	// Given the CRD, the PodGroup, owned by the driver.
	if err := installCRD(context.Background(), testCluster, volcanoCRDFile); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeCRD(t, volcanoCRD, volcanoPodGroups) })
	e = newEnv(t, "volcano")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	if r := e.execute(tmpl); r.Node == nil || r.Node.Phase != wfv1.NodePending {
		t.Fatalf("with the CRD: %s; want Pending", describe(r))
	}
	d := e.onlyDriver()
	name := podGroupName(d)
	pg, err := e.podGroup(volcanoPodGroups, name)
	if err != nil {
		t.Fatalf("PodGroup %s: %v", name, err)
	}
	// SparkPi: the driver and 2 executors, 1 core and 512 MiB + 384 MiB
	// overhead each.
	checkPodGroup(t, pg, d, map[string]any{
		"minMember":    int64(1),
		"queue":        "etl",
		"minResources": map[string]string{"cpu": "3", "memory": "2688Mi"},
	})
	if d.Annotations[spark.AnnotationVolcanoGroup] != name || d.Spec.SchedulerName != spark.SchedulerVolcano {
		t.Errorf("driver annotations %v, schedulerName %q: want group %s and volcano", d.Annotations, d.Spec.SchedulerName, name)
	}
	if want := "spark.kubernetes.executor.annotation." + spark.AnnotationVolcanoGroup + "=" + name; !strings.Contains(e.conf(d), want) {
		t.Errorf("spark.properties lacks %s, which puts the executors in the group", want)
	}

	// A driver the API server refuses (its service account does not
	// exist) takes its PodGroup with it.
	refused := template(t, "refused", strings.Replace(body, "serviceAccount: spark", "serviceAccount: nobody", 1))
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl, "node-2": refused})
	r = e.execute(refused)
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, `serviceaccount "nobody" not found`) {
		t.Fatalf("refused driver: %s", describe(r))
	}
	list, err := testCluster.Dynamic.Resource(volcanoPodGroups).Namespace(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].GetName() != name {
		var names []string
		for _, i := range list.Items {
			names = append(names, i.GetName())
		}
		t.Errorf("PodGroups %v, want only the running driver's %s", names, name)
	}
}

// batchScheduler kube-scheduler: a scheduler-plugins PodGroup owned by the
// driver, the pod-group label on the pods, schedulerName kube-scheduler;
// deleting the driver deletes the PodGroup.
func TestKubeSchedulerPodGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "kube-scheduler")
	tmpl := template(t, "spark-pi", sparkPi+"batchScheduler: kube-scheduler\nbatchSchedulerOptions:\n  resources: {cpu: \"4\", memory: 8Gi}\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	if r := e.execute(tmpl); r.Node == nil || r.Node.Phase != wfv1.NodePending {
		t.Fatalf("first reply: %s; want Pending", describe(r))
	}
	d := e.onlyDriver()
	name := podGroupName(d)
	pg, err := e.podGroup(schedulerPluginsPodGroups, name)
	if err != nil {
		t.Fatalf("PodGroup %s: %v", name, err)
	}
	checkPodGroup(t, pg, d, map[string]any{
		"minMember":    int64(1),
		"minResources": map[string]string{"cpu": "4", "memory": "8Gi"},
	})
	if d.Labels[spark.LabelPodGroup] != name || d.Spec.SchedulerName != spark.SchedulerKubeScheduler {
		t.Errorf("driver labels %v, schedulerName %q: want group %s and kube-scheduler", d.Labels, d.Spec.SchedulerName, name)
	}
	if want := "spark.kubernetes.executor.label." + spark.LabelPodGroup + "=" + name; !strings.Contains(e.conf(d), want) {
		t.Errorf("spark.properties lacks %s, which puts the executors in the group", want)
	}

	// The garbage collector deletes the PodGroup with its driver.
	if err := testCluster.Client.CoreV1().Pods(e.ns).Delete(context.Background(), d.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, err := e.podGroup(schedulerPluginsPodGroups, name)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("PodGroup %s outlived its driver", name)
	}
}

// The spark-submit launcher: the PodGroup exists before spark-submit runs,
// spark-submit puts the driver in it (the conf's label), and the driver
// it created gets it.
func TestSparkSubmitLauncherPodGroup(t *testing.T) {
	t.Parallel()
	configure, _ := withSparkSubmit(t, submittest.Config{Create: true})
	e := newEnv(t, "spark-submit-pod-group", configure)
	tmpl := template(t, "spark-pi", sparkPiSubmit+"batchScheduler: kube-scheduler\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	if r := e.execute(tmpl); r.Node == nil || r.Node.Phase != wfv1.NodePending {
		t.Fatalf("first reply: %s; want Pending", describe(r))
	}
	d := e.onlyDriver()
	name := podGroupName(d)
	pg, err := e.podGroup(schedulerPluginsPodGroups, name)
	if err != nil {
		t.Fatalf("PodGroup %s: %v", name, err)
	}
	checkPodGroup(t, pg, d, map[string]any{"minMember": int64(1)})
	if d.Labels[spark.LabelPodGroup] != name {
		t.Errorf("driver labels %v, want the group %s", d.Labels, name)
	}
}

// podGroupName is the PodGroup of driver d: <run>-pg.
func podGroupName(d corev1.Pod) string { return objects.RunName(d.Name) + "-pg" }
