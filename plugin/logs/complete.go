package logs

import (
	"context"
	"slices"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxCandidates bounds what a completion lists: a shell shows no more.
const maxCandidates = 500

// Candidates are what completes the next argument of sparkplug logs after
// args (its arguments so far, flags removed): the namespace's workflows,
// newest first, for WORKFLOW; the workflow's Spark nodes' display names,
// in the order they started, for NODE; nothing after.
func Candidates(ctx context.Context, wfc wfclient.Interface, namespace string, args []string) ([]string, error) {
	switch len(args) {
	case 0:
		list, err := wfc.ArgoprojV1alpha1().Workflows(namespace).List(ctx, metav1.ListOptions{Limit: maxCandidates})
		if err != nil {
			return nil, err
		}
		items := list.Items
		slices.SortStableFunc(items, func(a, b wfv1.Workflow) int {
			return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
		})
		out := make([]string, 0, len(items))
		for _, w := range items {
			out = append(out, w.Name)
		}
		return out, nil
	case 1:
		wf, err := wfc.ArgoprojV1alpha1().Workflows(namespace).Get(ctx, args[0], metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, n := range SparkNodes(wf, nil) {
			if !slices.Contains(out, n.DisplayName) {
				out = append(out, n.DisplayName)
			}
		}
		return out[:min(len(out), maxCandidates)], nil
	}
	return nil, nil
}
