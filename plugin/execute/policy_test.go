package execute

import (
	"context"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
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
