package nodestatus

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// MaxPatchBytes is the most one status patch carries, encoded. The API
// server refuses a request body over 3 MiB (413), and etcd an object over
// its --max-request-bytes, 1.5 MiB by default ("etcdserver: request is too
// large"), the TaskSet's spec and every other entry included: 1 MiB of
// results leaves the rest of the object half a MiB. A batch over it is
// written in several patches (Fit); one node's result over it cannot be
// written at all and is written as a failure instead (TooLarge).
const MaxPatchBytes = 1 << 20

// maxReasonBytes bounds the API server's words a TooLarge message quotes.
const maxReasonBytes = 200

// IsTooLarge says whether the API server refused a write for its size:
// the request body over its limit (413, RequestEntityTooLarge), or the
// object over etcd's ("etcdserver: request is too large", which API
// servers report as an internal error).
func IsTooLarge(err error) bool {
	if err == nil {
		return false
	}
	return apierrors.IsRequestEntityTooLargeError(err) || strings.Contains(err.Error(), "request is too large")
}

// TooLarge is the result written instead of res, which the TaskSet cannot
// take (why: its size against MaxPatchBytes, or the API server's refusal):
// the node fails, saying what was too large, rather than its result being
// tried again forever. The message is bounded whatever res holds.
func TooLarge(res wfv1.NodeResult, why string) wfv1.NodeResult {
	part, size := largestPart(res)
	return wfv1.NodeResult{Phase: wfv1.NodeFailed, Message: fmt.Sprintf(
		"sparkplug could not write this node's %s result into the WorkflowTaskSet: it is too large (%s, the largest part its %s of %d bytes): %s; keep outputs small (a path or URL to the data, not the data)",
		res.Phase, sizeOf(res), part, size, cut(why, maxReasonBytes))}
}

// sizeOf is a result's encoded size as a TaskSet entry, in words.
func sizeOf(res wfv1.NodeResult) string {
	return fmt.Sprintf("%d bytes encoded", entrySize("", res))
}

// largestPart names the largest part of a result: its message or one of
// its output parameters or artifacts, and its size.
func largestPart(res wfv1.NodeResult) (string, int) {
	part, size := "message", len(res.Message)
	if res.Outputs == nil {
		return part, size
	}
	for _, p := range res.Outputs.Parameters {
		n := len(p.Name)
		if p.Value != nil {
			n += len(p.Value.String())
		}
		if p.Default != nil {
			n += len(p.Default.String())
		}
		if n > size {
			part, size = fmt.Sprintf("output parameter %q", cut(p.Name, 64)), n
		}
	}
	for _, a := range res.Outputs.Artifacts {
		n := entrySize("", wfv1.NodeResult{Outputs: &wfv1.Outputs{Artifacts: []wfv1.Artifact{a}}})
		if n > size {
			part, size = fmt.Sprintf("output artifact %q", cut(a.Name, 64)), n
		}
	}
	if res.Outputs.Result != nil && len(*res.Outputs.Result) > size {
		part, size = "output result", len(*res.Outputs.Result)
	}
	return part, size
}

// entrySize is the size of node id's entry in a status patch: a patch of
// it alone, which counts the patch's frame once more than a batch of
// several needs, so a sum of them never falls short.
func entrySize(id string, res wfv1.NodeResult) int {
	body, err := Patch("", map[string]wfv1.NodeResult{id: res})
	if err != nil {
		return MaxPatchBytes + 1 // what cannot be encoded cannot be written
	}
	return len(body)
}

// Fit cuts batch to what one status patch carries: the entries whose
// sizes add up to at most limit, at least one; the finished results
// first (they let the workflow go on), then by node id. A result that
// alone is over MaxPatchBytes is in fit as TooLarge's failure, and in
// replaced with why; so is a node listed in oversized (one the API server
// refused alone), with its reason. The rest of batch waits for the next
// patch.
func Fit(batch map[string]wfv1.NodeResult, oversized map[string]string, limit int) (fit map[string]wfv1.NodeResult, replaced map[string]string) {
	ids := make([]string, 0, len(batch))
	for id := range batch {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		ca, cb := batch[a].Phase.Completed(), batch[b].Phase.Completed()
		if ca != cb {
			if ca {
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	})
	fit, replaced = map[string]wfv1.NodeResult{}, map[string]string{}
	total := 0
	for _, id := range ids {
		res := batch[id]
		why, refused := oversized[id]
		size := entrySize(id, res)
		if !refused && size > MaxPatchBytes {
			refused, why = true, fmt.Sprintf("over the %d bytes one status patch may carry", MaxPatchBytes)
		}
		if refused {
			res = TooLarge(res, why)
			replaced[id] = why
			size = entrySize(id, res)
		}
		if len(fit) > 0 && total+size > limit {
			continue
		}
		fit[id] = res
		total += size
	}
	return fit, replaced
}

// cut is s cut to at most n bytes, on a rune boundary, marked when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
