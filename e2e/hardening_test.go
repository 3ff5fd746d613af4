//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// A spark body as large and wrong as a Workflow can hold (about 800 KiB:
// 20,000 forbidden labels, a 100 KiB memory size and a 1,000-byte unknown
// key, as long as YAML allows a key) fails its node with a message Argo
// can write into the Workflow: the first problems, how many more, nothing
// echoed whole.
func TestAHugeInvalidBodyFailsItsNodeWithABoundedMessage(t *testing.T) {
	parallel(t)
	const labels, bigValue, bigKey = 20000, 100 << 10, 1000
	var b strings.Builder
	b.WriteString("\n          driver: {cores: 1, memory: \"" + strings.Repeat("9", bigValue) + "x\", serviceAccount: spark, labels: {")
	for i := range labels {
		fmt.Fprintf(&b, `"workflows.argoproj.io/k%d": v, `, i)
	}
	b.WriteString("}}\n          " + strings.Repeat("k", bigKey) + ": 1")
	Given(t).
		Workflow(sparkWorkflow("spark-junk-", "", b.String())).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeFailed).
		Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeFailed {
				t.Errorf("node %s, want Failed", n.Phase)
			}
			if len(n.Message) > spec.MaxMessageBytes {
				t.Errorf("a %d-byte message, over the %d-byte cap", len(n.Message), spec.MaxMessageBytes)
			}
			if !strings.Contains(n.Message, "invalid spark body") || !strings.Contains(n.Message, "more problems") ||
				!strings.Contains(n.Message, "spark.driver.labels") {
				t.Errorf("message %q: want the first problems named and how many more", n.Message)
			}
			if strings.Contains(n.Message, strings.Repeat("k", 100)) || strings.Contains(n.Message, strings.Repeat("9", 100)) {
				t.Error("the message echoes the unknown key or the memory size whole")
			}
			t.Logf("a %d KiB body gave a %d-byte message: %.200s...", b.Len()>>10, len(n.Message), n.Message)
		})
}
