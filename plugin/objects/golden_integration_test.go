//go:build integration

package objects

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// testCluster is etcd and kube-apiserver.
var testCluster *cluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) {
		testCluster = c
		// The batch schedulers' PodGroup CRDs, for the PodGroups.
		for _, f := range []string{"scheduling.volcano.sh_podgroups.yaml", "scheduling.x-k8s.io_podgroups.yaml"} {
			b, err := os.ReadFile(filepath.Join("testdata", "crds", f))
			if err == nil {
				err = c.Apply(context.Background(), b)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "install %s: %v\n", f, err)
				os.Exit(1)
			}
		}
	}))
}

var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}

// What every golden input builds passes the API server's validation and
// admission: the PodGroup (against its scheduler's CRD, every field
// known), the driver pod, the ConfigMap, the Services, the extras, and
// the executor pod template as Spark would make an executor of it (Spark
// adds the name, image and args; the rest is the template's).
func TestGoldenObjectsServerSideDryRun(t *testing.T) {
	ctx := context.Background()
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(t)
	core := testCluster.Client.CoreV1()
	dyn := testCluster.Dynamic
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".input.yaml")
		t.Run(name, func(t *testing.T) {
			run, ok := goldenRuns[name]
			if !ok {
				run = goldenRuns["default"]
			}
			s := readBody(t, in)
			prepare(t, run.Workflow.Namespace, s.Driver.ServiceAccount, s.Executor.ServiceAccount)
			objs, err := b.Build(s, run)
			if err != nil {
				t.Fatal(err)
			}
			ns := run.Workflow.Namespace
			if pg := objs.PodGroup; pg != nil {
				if _, err := dyn.Resource(PodGroupResource(pg)).Namespace(ns).Create(ctx, pg, dryRun); err != nil {
					t.Errorf("PodGroup: %v", err)
				}
			}
			if _, err := core.Pods(ns).Create(ctx, objs.Driver, dryRun); err != nil {
				t.Errorf("driver pod: %v", err)
			}
			driver := objs.Driver.DeepCopy()
			driver.UID = "6f1d1d5e-0000-4000-8000-000000000001"
			OwnedBy(objs, driver)
			if _, err := core.ConfigMaps(ns).Create(ctx, objs.ConfigMap, dryRun); err != nil {
				t.Errorf("ConfigMap: %v", err)
			}
			if _, err := core.Services(ns).Create(ctx, objs.Service, dryRun); err != nil {
				t.Errorf("Service: %v", err)
			}
			for _, o := range objs.Extra {
				var err error
				switch o := o.(type) {
				case *corev1.Service:
					_, err = core.Services(ns).Create(ctx, o, dryRun)
				case *networkingv1.Ingress:
					_, err = testCluster.Client.NetworkingV1().Ingresses(ns).Create(ctx, o, dryRun)
				default:
					t.Errorf("extra object %T: teach this test to create it", o)
					continue
				}
				if err != nil {
					t.Errorf("extra %T %s: %v", o, o.GetName(), err)
				}
			}

			var exec corev1.Pod
			if err := yaml.UnmarshalStrict([]byte(objs.ConfigMap.Data[spark.ExecutorPodTemplateKey]), &exec); err != nil {
				t.Fatal(err)
			}
			exec.Name = objs.Driver.Name[:len(objs.Driver.Name)-len("driver")] + "exec-1"
			exec.Spec.RestartPolicy = corev1.RestartPolicyNever
			for i := range exec.Spec.Containers {
				if exec.Spec.Containers[i].Image == "" {
					exec.Spec.Containers[i].Image = "spark:3.5.1"
				}
			}
			if _, err := core.Pods(ns).Create(ctx, &exec, dryRun); err != nil {
				t.Errorf("an executor from the template: %v", err)
			}
		})
	}
}

// prepare makes what the golden pods refer to: their namespace, service
// accounts, priority classes and runtime class.
func prepare(t *testing.T, ns string, accounts ...*string) {
	t.Helper()
	ctx := context.Background()
	c := testCluster.Client
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, sa := range append(accounts, ptrTo("default")) {
		if sa != nil {
			if err := testCluster.EnsureServiceAccount(ctx, ns, *sa); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, pc := range []string{"high", "low", "from-template", "batch-high", "batch-low", "driver-critical"} {
		_, err := c.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pc}, Value: 1000}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	_, err := c.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// What validation refuses in an Ingress URL or next to an Ingress class,
// the API server refuses too: it would fail a run at creation.
func TestAPIServerRefusesWhatIngressValidationRefuses(t *testing.T) {
	ctx := context.Background()
	r := goldenRuns["default"]
	prepare(t, r.Workflow.Namespace)
	s := readBody(t, filepath.Join("testdata", "ui-ingress.input.yaml"))
	objs, err := newBuilder(t).Build(s, r)
	if err != nil {
		t.Fatal(err)
	}
	var base *networkingv1.Ingress
	for _, o := range objs.Extra {
		if ing, ok := o.(*networkingv1.Ingress); ok {
			base = ing
		}
	}
	tests := []struct {
		name   string
		break_ func(*networkingv1.Ingress)
	}{
		{"another class in the class annotation", func(i *networkingv1.Ingress) { i.Annotations[spark.AnnotationIngressClass] = "traefik" }},
		{"a host with a port", func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host += ":8080" }},
		{"an IP address", func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "10.0.0.1" }},
		{"an upper-case host", func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "Spark.example.com" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ing := base.DeepCopy()
			tt.break_(ing)
			_, err := testCluster.Client.NetworkingV1().Ingresses(r.Workflow.Namespace).Create(ctx, ing, dryRun)
			if !apierrors.IsInvalid(err) {
				t.Errorf("the API server answered %v; want Invalid", err)
			}
		})
	}
}
