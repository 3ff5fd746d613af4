package nodestatus

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// withOutput is res with an output parameter of n bytes.
func withOutput(res wfv1.NodeResult, name string, n int) wfv1.NodeResult {
	res.Outputs = &wfv1.Outputs{Parameters: []wfv1.Parameter{{Name: name, Value: wfv1.AnyStringPtr(strings.Repeat("x", n))}}}
	return res
}

// Fit packs entries up to the limit, finished results first, and puts a
// result too large for any patch as a bounded failure.
func TestFit(t *testing.T) {
	const part = 400 << 10
	batch := map[string]wfv1.NodeResult{
		"a": withOutput(result(wfv1.NodeRunning, "RUNNING"), "data", part),
		"b": withOutput(result(wfv1.NodeRunning, "RUNNING"), "data", part),
		"c": withOutput(result(wfv1.NodeSucceeded, "COMPLETED"), "data", part),
		"d": withOutput(result(wfv1.NodeSucceeded, "COMPLETED"), "huge", MaxPatchBytes),
		"e": result(wfv1.NodeRunning, "RUNNING"),
	}
	fit, replaced := Fit(batch, nil, MaxPatchBytes)
	var ids []string
	for id := range fit {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	// c (finished) first, d as its failure, then a; b does not fit with
	// them, e does.
	if got := strings.Join(ids, ","); got != "a,c,d,e" {
		t.Fatalf("fit %s, want a,c,d,e", got)
	}
	body, err := Patch("7", fit)
	if err != nil || len(body) > MaxPatchBytes {
		t.Errorf("the patch is %d bytes (%v), over %d", len(body), err, MaxPatchBytes)
	}
	d := fit["d"]
	if d.Phase != wfv1.NodeFailed || d.Outputs != nil || len(d.Message) > 1024 ||
		!strings.Contains(d.Message, `too large`) || !strings.Contains(d.Message, `output parameter "huge"`) || !strings.Contains(d.Message, "Succeeded result") {
		t.Errorf("d written as %+v; want a bounded failure naming the output", d)
	}
	if len(replaced) != 1 || replaced["d"] == "" {
		t.Errorf("replaced %v, want d", replaced)
	}
	// A node the API server refused alone is its failure, whatever its size.
	fit, _ = Fit(map[string]wfv1.NodeResult{"e": batch["e"]}, map[string]string{"e": "the API server refused it"}, MaxPatchBytes)
	if fit["e"].Phase != wfv1.NodeFailed || !strings.Contains(fit["e"].Message, "the API server refused it") {
		t.Errorf("e written as %+v", fit["e"])
	}
	// Always one entry, even over the limit.
	if fit, _ := Fit(map[string]wfv1.NodeResult{"a": batch["a"]}, nil, 10); len(fit) != 1 {
		t.Errorf("fit %v under a limit smaller than one entry, want the entry", fit)
	}
}

// A batch over MaxPatchBytes is written in patches that each carry at
// most that, one per flush; every result lands.
func TestFlushSplitsAnOversizedBatch(t *testing.T) {
	ids := []string{"n1", "n2", "n3", "n4"}
	e := newWriterEnv(t, taskSet(ids, nil), taskSet(ids, nil), func(int) error { return nil })
	for _, id := range ids {
		e.w.Set(id, inc0, withOutput(result(wfv1.NodeSucceeded, "COMPLETED"), "data", 400<<10))
	}
	for range ids {
		e.w.Flush(context.Background())
	}
	if len(e.patches) < 2 {
		t.Fatalf("%d patch(es), want the batch split", len(e.patches))
	}
	for i, p := range e.patches {
		if len(p) > MaxPatchBytes {
			t.Errorf("patch %d is %d bytes, over %d", i, len(p), MaxPatchBytes)
		}
	}
	got := e.stored(t).Status.Nodes
	for _, id := range ids {
		if got[id].Phase != wfv1.NodeSucceeded || got[id].Outputs == nil {
			t.Errorf("%s stored as %s, want its result", id, got[id].Phase)
		}
	}
	if e.w.Flush(context.Background()) {
		t.Error("a flush with nothing left patched")
	}
}

// One node's result over MaxPatchBytes is never sent: its failure is, at
// once, and it is not tried again.
func TestFlushWritesAnOversizedResultAsAFailure(t *testing.T) {
	e := newWriterEnv(t, taskSet([]string{"n1"}, nil), taskSet([]string{"n1"}, nil), func(int) error { return nil })
	e.w.Set("n1", inc0, withOutput(result(wfv1.NodeSucceeded, "COMPLETED"), "rows", MaxPatchBytes+1))
	if !e.w.Flush(context.Background()) {
		t.Fatal("Flush did not patch")
	}
	if len(e.patches) != 1 || len(e.patches[0]) > 2048 {
		t.Fatalf("%d patches, the first %d bytes; want one small patch", len(e.patches), len(e.patches[0]))
	}
	got := e.stored(t).Status.Nodes["n1"]
	if got.Phase != wfv1.NodeFailed || !strings.Contains(got.Message, `output parameter "rows"`) {
		t.Errorf("stored %+v, want the failure naming the output", got)
	}
	e.view = e.stored(t)
	if e.w.Flush(context.Background()) || len(e.patches) != 1 {
		t.Errorf("%d patches; the failure, final, is written once", len(e.patches))
	}
}

// The API server's refusals for size (413, etcd's "request is too
// large"): a batch of several nodes is cut smaller, a node refused alone
// is written as its failure, and a node whose failure is refused too is
// given up: a bounded number of patches, never the same one forever.
func TestFlushTakesTheAPIServersSizeRefusals(t *testing.T) {
	entity := apierrors.NewRequestEntityTooLargeError("limit is 3145728")
	etcd := apierrors.NewInternalError(errors.New("etcdserver: request is too large"))
	for _, err := range []error{entity, etcd} {
		if !IsTooLarge(err) {
			t.Fatalf("IsTooLarge(%v) = false", err)
		}
	}
	if IsTooLarge(apierrors.NewConflict(taskSets, "wf", errors.New("modified"))) {
		t.Fatal("a conflict taken for a refusal for size")
	}

	t.Run("batch cut smaller, node failed", func(t *testing.T) {
		e := newWriterEnv(t, taskSet([]string{"n1", "n2"}, nil), taskSet([]string{"n1", "n2"}, nil), func(n int) error {
			switch n {
			case 1, 2: // both, then n1 alone
				return entity
			}
			return nil
		})
		running := result(wfv1.NodeRunning, "RUNNING")
		e.w.Set("n1", inc0, running)
		e.w.Set("n2", inc0, running)
		for range 4 {
			e.w.Flush(context.Background())
		}
		var sent []string
		for _, p := range e.patches {
			_, nodes := patched(t, p)
			sent = append(sent, strings.Join(nodes, "+"))
		}
		if got := strings.Join(sent, ", "); got != "n1+n2, n1, n1, n2" {
			t.Fatalf("patches of %s; want n1+n2 refused, n1 refused, n1's failure, n2", got)
		}
		got := e.stored(t).Status.Nodes
		if got["n1"].Phase != wfv1.NodeFailed || !strings.Contains(got["n1"].Message, "Request entity too large") || got["n2"].Phase != wfv1.NodeRunning {
			t.Errorf("stored %+v; want n1's failure saying why, n2's result", got)
		}
	})

	t.Run("failure refused too", func(t *testing.T) {
		e := newWriterEnv(t, taskSet([]string{"n1"}, nil), taskSet([]string{"n1"}, nil), func(int) error { return etcd })
		e.w.Set("n1", inc0, result(wfv1.NodeSucceeded, "COMPLETED"))
		for range 5 {
			e.w.Flush(context.Background())
		}
		if len(e.patches) != 2 {
			t.Fatalf("%d patches, want 2: the result, then its failure", len(e.patches))
		}
		if _, ok := e.w.Wanted("n1"); ok {
			t.Error("n1 is still wanted after its failure was refused")
		}
		e.w.Set("n1", inc0, result(wfv1.NodeSucceeded, "COMPLETED"))
		e.w.Flush(context.Background())
		if len(e.patches) != 2 {
			t.Errorf("a given-up node was tried again: %d patches", len(e.patches))
		}
	})
}
