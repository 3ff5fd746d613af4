//go:build integration

package convert

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/argoproj/argo-workflows/v3/pkg/apis/workflow"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

// testCluster is etcd and kube-apiserver, shared by the tests below.
var testCluster *cluster.Cluster

// TestMain starts the API server with Argo's full CRDs of Workflows and
// CronWorkflows (the schema of every field, not the minimal ones that
// accept any spec) and the test namespace.
func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{
		BeforeControllers: func(ctx context.Context, c *cluster.Cluster) error {
			return argo.InstallForDryRun(ctx, c, "../..", testNamespace, workflow.CronWorkflowPlural, workflow.WorkflowPlural)
		},
	}, func(c *cluster.Cluster) { testCluster = c }))
}

// testNamespace is where every converted object is created, whatever
// namespace it names.
const testNamespace = "converted"

// dryRun creates nothing: the API server decodes, defaults and validates
// the object against the CRD's OpenAPI schema, strictly (unknown fields
// are errors), then drops it.
var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}

// resources are the kinds convert writes.
var resources = map[string]string{
	workflow.WorkflowKind:     workflow.WorkflowPlural,
	workflow.CronWorkflowKind: workflow.CronWorkflowPlural,
}

// goldenObjects are the objects of a golden file, as kubectl create sends
// them, in the test namespace.
func goldenObjects(t *testing.T, golden string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./plugin/convert/ -run Golden -update writes it)", err)
	}
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		j, err := utilyaml.ToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		if string(bytes.TrimSpace(j)) == "null" {
			continue // the findings: comments only
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			t.Fatal(err)
		}
		u.SetNamespace(testNamespace)
		objs = append(objs, u)
	}
}

func createDryRun(ctx context.Context, dyn dynamic.Interface, u *unstructured.Unstructured) error {
	gvr := schema.GroupVersionResource{Group: workflow.Group, Version: workflow.Version, Resource: resources[u.GetKind()]}
	_, err := dyn.Resource(gvr).Namespace(testNamespace).Create(ctx, u, dryRun)
	return err
}

// Every object convert writes for the testdata inputs is one the API
// server takes, against Argo's full schemas.
func TestGoldenOutputsServerSideDryRun(t *testing.T) {
	dyn := testCluster.Dynamic
	goldens, err := filepath.Glob(filepath.Join("testdata", "*.golden.yaml"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	n := 0
	for _, g := range goldens {
		for i, u := range goldenObjects(t, g) {
			n++
			name := u.GetName()
			if name == "" {
				name = u.GetGenerateName()
			}
			t.Run(fmt.Sprintf("%s#%d_%s_%s", filepath.Base(g), i, u.GetKind(), name), func(t *testing.T) {
				if _, ok := resources[u.GetKind()]; !ok {
					t.Fatalf("kind %q: convert writes only Workflows and CronWorkflows", u.GetKind())
				}
				if err := createDryRun(context.Background(), dyn, u); err != nil {
					t.Errorf("the API server refuses it: %v", err)
				}
			})
		}
	}
	if n == 0 {
		t.Fatal("no objects in the golden files")
	}
}

// A broken copy must be refused, or the test above proves nothing: the
// minimal CRDs accept any spec.
func TestServerSideDryRunRefusesBrokenOutputs(t *testing.T) {
	dyn := testCluster.Dynamic
	objs := goldenObjects(t, filepath.Join("testdata", "kso-spark-pi-scheduled.golden.yaml"))
	if len(objs) != 1 {
		t.Fatalf("%d objects, want 1", len(objs))
	}
	tests := []struct {
		name   string
		break_ func(u *unstructured.Unstructured)
		want   string
	}{
		{"schedules not a list", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "*/3 * * * *", "spec", "schedules")
		}, "spec.schedules"},
		{"history limit not a number", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "one", "spec", "successfulJobsHistoryLimit")
		}, "spec.successfulJobsHistoryLimit"},
		{"unknown field", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(1), "spec", "historyLimit")
		}, `unknown field "spec.historyLimit"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := objs[0].DeepCopy()
			tt.break_(u)
			err := createDryRun(context.Background(), dyn, u)
			switch {
			case err == nil:
				t.Fatalf("the API server accepted it; want an error about %s", tt.want)
			case !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err):
				t.Fatalf("error %v (%T); want Invalid or BadRequest", err, err)
			case !strings.Contains(err.Error(), tt.want):
				t.Errorf("error %v; want it to name %s", err, tt.want)
			}
		})
	}
}

// What each of the Spark operator's examples becomes (the rendered golden
// files) is what the API server takes: the PodGroup, the driver pod, its
// ConfigMap and its Services, strictly validated and admitted, in a
// namespace with the examples' ServiceAccount and the batch schedulers'
// PodGroup CRDs.
func TestKSOExamplesRenderedServerSideDryRun(t *testing.T) {
	ctx := context.Background()
	dyn := testCluster.Dynamic
	if err := testCluster.EnsureServiceAccount(ctx, testNamespace, "spark-operator-spark"); err != nil {
		t.Fatal(err)
	}
	crds, err := filepath.Glob(filepath.Join("..", "objects", "testdata", "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no PodGroup CRDs: %v", err)
	}
	for _, f := range crds {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := testCluster.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	resources := map[string]string{
		"v1/Pod": "pods", "v1/ConfigMap": "configmaps", "v1/Service": "services",
		"scheduling.volcano.sh/v1beta1/PodGroup": "podgroups", "scheduling.x-k8s.io/v1alpha1/PodGroup": "podgroups",
	}
	goldens, err := filepath.Glob(filepath.Join("testdata", "kso-examples", "rendered", "*.golden.yaml"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no rendered examples: %v", err)
	}
	n := 0
	for _, g := range goldens {
		for _, u := range goldenObjects(t, g) {
			n++
			t.Run(fmt.Sprintf("%s/%s_%s", filepath.Base(g), u.GetKind(), u.GetName()), func(t *testing.T) {
				res, ok := resources[u.GetAPIVersion()+"/"+u.GetKind()]
				if !ok {
					t.Fatalf("%s %s: teach this test to create it", u.GetAPIVersion(), u.GetKind())
				}
				gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := dyn.Resource(gv.WithResource(res)).Namespace(testNamespace).Create(ctx, u, dryRun); err != nil {
					t.Errorf("the API server refuses it: %v", err)
				}
			})
		}
	}
	if n == 0 {
		t.Fatal("no objects in the rendered examples")
	}
}
