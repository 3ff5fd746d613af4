package execute

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/sparkplug-io/sparkplug/plugin/kueue"
	"github.com/sparkplug-io/sparkplug/plugin/policy"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
)

// A step whose driver would run as the plugin's own ServiceAccount fails
// as an invalid body does, naming the field and the rule, and no driver is
// created: the policy is checked before anything is.
func TestStepAskingForThePluginsRightsFails(t *testing.T) {
	for _, tc := range []struct {
		name, extra, want string
	}{
		{"the plugin's ServiceAccount", `,"driver":{"serviceAccount":"spark-executor-plugin"}`,
			"spark.driver.serviceAccount: ServiceAccount spark-executor-plugin is the plugin's own"},
		{"its token Secret", `,"executor":{"secrets":[{"name":"spark-executor-plugin.service-account-token","path":"/t","secretType":"Generic"}]}`,
			"spark.executor.secrets[0].name: Secret spark-executor-plugin.service-account-token is named as the token of the plugin's ServiceAccount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, args, calls := newCore(t, func(int) error { return nil }, tc.extra)
			for range 2 { // a second pass says the same and creates nothing either
				r, err := core.testPass(context.Background(), args)
				if err != nil {
					t.Fatal(err)
				}
				if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, tc.want) ||
					!strings.HasPrefix(r.Node.Message, "refused by the plugin's policy: ") {
					t.Fatalf("reply %+v; want Failed with %q", r.Node, tc.want)
				}
			}
			if *calls != 0 {
				t.Fatalf("%d driver pods created; want none", *calls)
			}
		})
	}
}

// With --allowed-workload-priority-classes, a queued step naming another
// WorkloadPriorityClass fails, naming the class and the allowed ones,
// before any Workload or pod is made; a class allowed, or a step not
// queued, goes on.
func TestQueuedStepWithAPriorityClassNotAllowedFails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		refuse bool
	}{
		{"another class", map[string]string{kueue.LabelQueueName: "lq", kueue.LabelPriorityClass: "urgent"}, true},
		{"an allowed class", map[string]string{kueue.LabelQueueName: "lq", kueue.LabelPriorityClass: "batch"}, false},
		{"no class", map[string]string{kueue.LabelQueueName: "lq"}, false},
		{"not queued", map[string]string{kueue.LabelPriorityClass: "urgent"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := &wfv1.Template{Name: "pi", Plugin: &wfv1.Plugin{}, Metadata: wfv1.Metadata{Labels: tc.labels}}
			tmpl.Plugin.Value = json.RawMessage(`{"spark":` + strings.Replace(body, "%s", "", 1) + `}`)
			ts := &wfv1.WorkflowTaskSet{
				ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns"},
				Spec:       wfv1.WorkflowTaskSetSpec{Tasks: map[string]wfv1.Template{"wf-1": *tmpl}},
			}
			kube := fake.NewClientset()
			opts := Options{Policy: policy.Default()}
			opts.Policy.WorkloadPriorityClasses = []string{"batch", "low"}
			core, args := startCoreWith(t, scope.Clients{Kube: kube, Workflows: wffake.NewSimpleClientset(ts)}, tmpl, opts)
			r, err := core.testPass(context.Background(), args)
			if err != nil {
				t.Fatal(err)
			}
			refused := r.Node != nil && strings.HasPrefix(r.Node.Message, "refused by the plugin's policy: ")
			if refused != tc.refuse {
				t.Fatalf("reply %+v; refused %v, want %v", r.Node, refused, tc.refuse)
			}
			if !tc.refuse {
				return
			}
			want := "metadata.labels[kueue.x-k8s.io/priority-class]: WorkloadPriorityClass urgent is not allowed: name one of batch, low, or none (policy rule allowed-workload-priority-classes)"
			if r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, want) {
				t.Fatalf("reply %+v; want Failed with %q", r.Node, want)
			}
			for _, a := range kube.Actions() {
				if a.GetVerb() == "create" && a.GetResource().Resource != "selfsubjectaccessreviews" {
					t.Errorf("%s created for a refused step", a.GetResource().Resource)
				}
			}
		})
	}
}
