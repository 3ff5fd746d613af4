//go:build integration

package examples

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/argoproj/argo-workflows/v3/pkg/apis/workflow"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
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

// TestMain starts the API server with Argo's full CRDs of the examples'
// kinds (the schemas of every field, not the minimal ones that accept any
// spec), the test namespace, and the `spark` ServiceAccount the examples'
// drivers run as.
func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{
		BeforeControllers: func(ctx context.Context, c *cluster.Cluster) error {
			if err := argo.InstallForDryRun(ctx, c, "..", testNamespace, slices.Sorted(maps.Values(resources))...); err != nil {
				return err
			}
			return c.EnsureServiceAccount(ctx, testNamespace, "spark")
		},
	}, func(c *cluster.Cluster) { testCluster = c }))
}

// dryRun creates nothing: the API server decodes, defaults, validates
// (for Argo's kinds, against the CRD's OpenAPI schema) and admits the
// object, then drops it. Strict field validation makes unknown fields
// errors, not warnings.
var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}

// resources maps the examples' kinds to their Argo resources.
var resources = map[string]string{
	workflow.WorkflowKind:         workflow.WorkflowPlural,
	workflow.WorkflowTemplateKind: workflow.WorkflowTemplatePlural,
	workflow.CronWorkflowKind:     workflow.CronWorkflowPlural,
}

// unstructuredOf is a document as the API server receives it from
// kubectl create, in the test namespace.
func unstructuredOf(t *testing.T, d *document) *unstructured.Unstructured {
	t.Helper()
	j, err := utilyaml.ToJSON(d.raw)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(testNamespace)
	return u
}

func createDryRun(ctx context.Context, dyn dynamic.Interface, u *unstructured.Unstructured) error {
	gvr := schema.GroupVersionResource{Group: workflow.Group, Version: "v1alpha1", Resource: resources[u.GetKind()]}
	_, err := dyn.Resource(gvr).Namespace(testNamespace).Create(ctx, u, dryRun)
	return err
}

func TestExamplesServerSideDryRun(t *testing.T) {
	dyn := testCluster.Dynamic
	for _, d := range loadExamples(t) {
		t.Run(d.label(), func(t *testing.T) {
			if err := createDryRun(context.Background(), dyn, unstructuredOf(t, d)); err != nil {
				t.Errorf("%s: the API server refuses it: %v", d, err)
			}
		})
	}
}

// A broken copy of an example must be refused, or the dry run above proves
// nothing: the minimal CRDs, for one, accept any spec.
func TestServerSideDryRunRefusesBrokenExamples(t *testing.T) {
	dyn := testCluster.Dynamic
	docs, err := decodeFile("spark-pi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		break_ func(tmpl map[string]any)
		want   string
	}{
		{"field of the wrong type", func(tmpl map[string]any) { tmpl["parallelism"] = "many" }, "spec.templates[0].parallelism"},
		{"unknown field", func(tmpl map[string]any) { tmpl["pluginn"] = map[string]any{"spark": map[string]any{}} }, `unknown field "spec.templates[0].pluginn"`},
		{"step that is not a list of steps", func(tmpl map[string]any) { tmpl["steps"] = []any{"pi"} }, "spec.templates[0].steps[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := unstructuredOf(t, docs[0])
			templates, _, _ := unstructured.NestedSlice(u.Object, "spec", "templates")
			tt.break_(templates[0].(map[string]any))
			if err := unstructured.SetNestedSlice(u.Object, templates, "spec", "templates"); err != nil {
				t.Fatal(err)
			}
			err := createDryRun(context.Background(), dyn, u)
			switch {
			case err == nil:
				t.Fatalf("the API server accepted it; want an error about %s", tt.want)
			case !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err):
				t.Fatalf("error %v (%T); want Invalid or BadRequest", err, err)
			case !strings.Contains(err.Error(), tt.want):
				t.Errorf("error %v; want it to name %s", err, tt.want)
			default:
				t.Logf("refused: %v", err)
			}
		})
	}
}

// What every example's spark body builds, the driver pod, its ConfigMap,
// headless Service and the objects only some bodies have (UI Service,
// Ingresses), passes the API server's own validation and admission (the
// ServiceAccount `spark` exists).
func TestBuiltObjectsServerSideDryRun(t *testing.T) {
	calls, _ := sparkCalls(loadExamples(t))
	b := newBuilder(t)
	ctx := context.Background()
	core := testCluster.Client.CoreV1()
	for _, c := range calls {
		t.Run(c.path, func(t *testing.T) {
			r, err := render(b, c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := core.Pods(testNamespace).Create(ctx, r.objs.Driver, dryRun); err != nil {
				t.Errorf("driver pod %s: %v", r.objs.Driver.Name, err)
			}
			if _, err := core.ConfigMaps(testNamespace).Create(ctx, r.objs.ConfigMap, dryRun); err != nil {
				t.Errorf("ConfigMap %s: %v", r.objs.ConfigMap.Name, err)
			}
			if _, err := core.Services(testNamespace).Create(ctx, r.objs.Service, dryRun); err != nil {
				t.Errorf("Service %s: %v", r.objs.Service.Name, err)
			}
			for _, o := range r.objs.Extra {
				var err error
				switch o := o.(type) {
				case *corev1.Service:
					_, err = core.Services(testNamespace).Create(ctx, o, dryRun)
				case *networkingv1.Ingress:
					_, err = testCluster.Client.NetworkingV1().Ingresses(testNamespace).Create(ctx, o, dryRun)
				default:
					err = fmt.Errorf("teach this test to create a %T", o)
				}
				if err != nil {
					t.Errorf("%T %s: %v", o, o.GetName(), err)
				}
			}
		})
	}
}
