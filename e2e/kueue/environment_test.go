//go:build e2e

package kueue

import (
	"context"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestKueueAdmitsAHandMadeWorkload checks the environment's Kueue alone,
// with no sparkplug in the way: a Workload made by hand, through Kueue's
// own webhooks, is admitted to a ClusterQueue that fits it and not to one
// that does not. When this test fails, Kueue's set-up is broken; when it
// passes and the Spark tests fail, sparkplug is.
func TestKueueAdmitsAHandMadeWorkload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// Kueue's webhooks for its own kinds are registered, and fail closed:
	// every object below passed through them.
	for _, name := range []string{"kueue-mutating-webhook-configuration", "kueue-validating-webhook-configuration"} {
		var paths []string
		if strings.Contains(name, "mutating") {
			c, err := env.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range c.Webhooks {
				paths = append(paths, webhookPath(t, h.ClientConfig, h.FailurePolicy))
			}
		} else {
			c, err := env.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range c.Webhooks {
				paths = append(paths, webhookPath(t, h.ClientConfig, h.FailurePolicy))
			}
		}
		if !slices.ContainsFunc(paths, func(p string) bool { return strings.HasSuffix(p, "-kueue-x-k8s-io-v1beta2-workload") }) {
			t.Errorf("%s has no Workload webhook: %v", name, paths)
		}
	}

	q := newQueue(t, queueSpec{CPU: "1", Memory: "1Gi"})
	wls := watchWorkloads(t, q.LocalQueue)
	workload := func(name, cpu string) {
		create(t, gvrWorkload, env.Namespace, "Workload", name, map[string]any{
			"queueName": q.LocalQueue,
			"podSets": []any{map[string]any{
				"name":  "main",
				"count": int64(1),
				"template": map[string]any{"spec": map[string]any{
					"restartPolicy": "Never",
					"containers": []any{map[string]any{
						"name":      "main",
						"image":     "e2e.sparkplug.test/none",
						"resources": map[string]any{"requests": map[string]any{"cpu": cpu, "memory": "100Mi"}},
					}},
				}},
			}},
		})
	}
	id := shortID(t)
	fits, tooBig := "fits-"+id, "too-big-"+id
	workload(fits, "500m")
	workload(tooBig, "2")

	waitFor(t, "Workload "+fits+" to be admitted and "+tooBig+" to be refused for lack of quota", func() bool {
		live := wls.Live()
		ok, big := live[fits], live[tooBig]
		if ok == nil || big == nil || !isTrue(ok, "Admitted") {
			return false
		}
		c, found := condition(big, "QuotaReserved")
		return found && c.Status == "False" && strings.Contains(c.Message, "insufficient")
	}, wls.String)

	live := wls.Live()
	if n, ok := admittedCount(live[fits], "main"); !ok || n != 1 {
		t.Errorf("Workload %s admitted with count %d (found %v), want 1", fits, n, ok)
	}
	cq, _, _ := unstructured.NestedString(live[fits].Object, "status", "admission", "clusterQueue")
	if cq != q.ClusterQueue {
		t.Errorf("Workload %s admitted to ClusterQueue %q, want %s", fits, cq, q.ClusterQueue)
	}
	if isTrue(live[tooBig], "Admitted") {
		t.Errorf("Workload %s (2 CPUs) admitted by a ClusterQueue of 1", tooBig)
	}
	c, _ := condition(live[tooBig], "QuotaReserved")
	t.Logf("Workload %s waits: %s", tooBig, c.Message)
}

// webhookPath checks that a webhook calls the manager on 127.0.0.1 and
// fails closed, and returns its path.
func webhookPath(t *testing.T, cc admissionv1.WebhookClientConfig, policy *admissionv1.FailurePolicyType) string {
	t.Helper()
	if cc.URL == nil || !strings.HasPrefix(*cc.URL, "https://127.0.0.1:") || len(cc.CABundle) == 0 {
		t.Errorf("webhook client config %+v: want url https://127.0.0.1:<port>/... and a caBundle", cc)
		return ""
	}
	if policy == nil || *policy != admissionv1.Fail {
		t.Errorf("webhook %s: failurePolicy %v, want Fail", *cc.URL, policy)
	}
	return *cc.URL
}
