package scope

import (
	"bufio"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What slimming one Workflow may cost in these tests: a few plugin nodes
// kept, whatever the Workflow holds (maxHeapGrowth), and a reading that
// allocates a few MiB, garbage included (maxAllocated), which bounds what
// a bomb costs at its peak.
const (
	maxHeapGrowth = 2 << 20
	maxAllocated  = 16 << 20
)

// compressed is base64 of the gzip of what write writes, as Argo's
// compressedNodes.
func compressed(t testing.TB, write func(w *bufio.Writer)) string {
	t.Helper()
	var b strings.Builder
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	zw, err := gzip.NewWriterLevel(enc, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(zw, 1<<16)
	write(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// podNodes writes a JSON object of n Pod nodes of some KiB each, as a
// big loop of container steps has, with the plugin nodes extra among
// them.
func podNodes(n int, extra wfv1.Nodes) func(*bufio.Writer) {
	pad := strings.Repeat("x", 900)
	return func(w *bufio.Writer) {
		w.WriteString("{")
		for id, node := range extra {
			js, _ := json.Marshal(node)
			fmt.Fprintf(w, "%q:%s,", id, js)
		}
		for i := range n {
			if i > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, `"w-%d":{"id":"w-%d","name":"w.step(%d:%d)","displayName":"step(%d:%d)","type":"Pod","templateName":"step",`+
				`"phase":"Succeeded","boundaryID":"w","message":"%s","children":["w-%d"]}`, i, i, i, i, i, i, pad, i+1)
		}
		w.WriteString("}")
	}
}

// heapGrowth is what keep, called once, adds to the live heap (after a
// collection, what it returns kept alive), and what it allocated in all.
func heapGrowth(keep func() any) (live int64, allocated uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := keep()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc), after.TotalAlloc - before.TotalAlloc
}

// The Spark nodes among a loop of container steps, one of them an
// attempt of a loop child with a retryStrategy.
var sparkNodes = wfv1.Nodes{
	"w-spark":   {ID: "w-spark", Name: "w.pi", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodeRunning, StartedAt: metav1.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)},
	"w-retry":   {ID: "w-retry", Name: "w.each(0:a)", Type: wfv1.NodeTypeRetry, Phase: wfv1.NodeRunning},
	"w-attempt": {ID: "w-attempt", Name: "w.each(0:a)(0)", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodeSucceeded},
	"w-other":   {ID: "w-other", Name: "w.other(1:b)", Type: wfv1.NodeTypeRetry, Phase: wfv1.NodeRunning},
}

// Of a Workflow's nodes, plain or compressed, the cache keeps its plugin
// nodes and the Retry parents of their attempts, and of those what a pass
// reads: a loop child's attempt is still known as one, a fulfilled node
// as fulfilled. Only the cache says a Workflow is refused.
func TestSlimKeepsOnlyPluginNodesAndTheirRetryParents(t *testing.T) {
	plain := wfv1.Nodes{"w-pod": {ID: "w-pod", Name: "w.step", Type: wfv1.NodeTypePod, Phase: wfv1.NodeSucceeded,
		Message: "m", Children: []string{"w-spark"}}}
	for id, n := range sparkNodes {
		plain[id] = n
	}
	for name, wf := range map[string]*wfv1.Workflow{
		// Its author's own sparkplug.io/refused is not taken for a refusal.
		"plain": {ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationRefused: "says who"}},
			Status: wfv1.WorkflowStatus{Nodes: plain}},
		"compressed": {Status: wfv1.WorkflowStatus{CompressedNodes: compressed(t, podNodes(100, sparkNodes))}},
	} {
		t.Run(name, func(t *testing.T) {
			got, _ := slim(wf)
			w := got.(*wfv1.Workflow)
			if why := Refused(w); why != "" {
				t.Fatalf("refused: %s", why)
			}
			var ids []string
			for id := range w.Status.Nodes {
				ids = append(ids, id)
			}
			if len(ids) != 3 || w.Status.Nodes["w-spark"].Name != "w.pi" || w.Status.Nodes["w-retry"].Type != wfv1.NodeTypeRetry {
				t.Errorf("kept %v, want w-spark, w-attempt and its Retry parent w-retry", ids)
			}
			if loop, known := InLoop(w.Status.Nodes, "w-attempt"); !loop || !known {
				t.Errorf("InLoop(w-attempt) = %v, %v; want a loop child", loop, known)
			}
			if !w.Status.Nodes["w-attempt"].Fulfilled() || w.Status.Nodes["w-spark"].Fulfilled() || w.Status.CompressedNodes != "" {
				t.Errorf("nodes %+v", w.Status.Nodes)
			}
			// When a Spark node started says what can be its run.
			if got, want := w.Status.Nodes["w-spark"].StartedAt, sparkNodes["w-spark"].StartedAt; !got.Equal(&want) {
				t.Errorf("w-spark started at %s, want %s", got, want)
			}
		})
	}
}

// A Workflow without a Spark step (no plugin node) is not kept: of its
// hundreds of nodes, templates, labels and message the cache holds its
// name, uid and the fields that say it ended, a few hundred bytes.
func TestAWorkflowWithoutSparkNodesIsNotKept(t *testing.T) {
	nodes := wfv1.Nodes{}
	for i := range 500 {
		id := fmt.Sprintf("w-%d", i)
		nodes[id] = wfv1.NodeStatus{ID: id, Name: fmt.Sprintf("w.step(%d:%d)", i, i), Type: wfv1.NodeTypePod,
			Phase: wfv1.NodeSucceeded, Message: strings.Repeat("x", 500)}
	}
	wf := &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", UID: "u", ResourceVersion: "7",
			Labels: map[string]string{"l": strings.Repeat("v", 63)}, Annotations: map[string]string{"a": strings.Repeat("v", 4096)}},
		Spec: wfv1.WorkflowSpec{Entrypoint: "main", Templates: []wfv1.Template{{Name: "main"}, {Name: "step"}}},
		Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowSucceeded, Message: "done", Nodes: nodes,
			StoredTemplates: map[string]wfv1.Template{"x": {Name: "step"}}},
	}
	got, _ := slim(wf)
	w := got.(*wfv1.Workflow)
	if len(w.Status.Nodes) != 0 || w.Labels != nil || w.Annotations != nil || len(w.Spec.Templates) != 0 || w.Status.Message != "" {
		t.Errorf("kept of a workflow without Spark nodes: %+v", w)
	}
	if w.Name != "w" || w.Namespace != "ns" || w.UID != "u" || w.ResourceVersion != "7" || !w.Status.Phase.Completed() {
		t.Errorf("dropped what says which workflow it is and that it ended: %+v", w)
	}
	if js, _ := json.Marshal(w); len(js) > 512 {
		t.Errorf("a workflow without Spark nodes costs %d bytes of JSON, want at most 512: %s", len(js), js)
	}
}

// repeat writes n bytes b.
func repeat(w *bufio.Writer, b byte, n int64) {
	_, _ = io.CopyN(w, repeated(b), n)
}

// repeated is an endless reader of one byte.
type repeated byte

func (r repeated) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// A hostile Workflow's compressedNodes (a compression bomb, nodes over
// the bounds) is refused, saying why, and slimming it grows the live heap
// by less than maxHeapGrowth; a big legitimate one (a loop of thousands
// of container steps beside its Spark nodes) costs only its Spark nodes.
func TestCompressedNodesWithinBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses a GiB")
	}
	longNames := func(w *bufio.Writer) {
		w.WriteString("{")
		for i := range 20000 {
			if i > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, `"w-%d":{"name":"w.%s-%d","type":"Plugin"}`, i, strings.Repeat("n", 100), i)
		}
		w.WriteString("}")
	}
	for _, c := range []struct {
		name  string
		write func(*bufio.Writer)
		why   string // "": kept
	}{
		{"a GiB of zeros", func(w *bufio.Writer) { repeat(w, 0, 1<<30) }, "not readable"},
		{"a GiB of spaces in a node", func(w *bufio.Writer) {
			w.WriteString(`{"w-1":{"name":"w.pi","type":"Plugin","phase":`)
			repeat(w, ' ', 1<<30)
		}, "over 1 MiB"},
		{"a node of 48 MiB", func(w *bufio.Writer) {
			w.WriteString(`{"w-1":{"name":"w.pi","type":"Pod","message":"`)
			repeat(w, 'x', 48<<20)
			w.WriteString(`"}}`)
		}, "over 1 MiB"},
		{"44 MiB of nodes", podNodes(40000, sparkNodes), "over 32 MiB"},
		{"20,000 plugin nodes of long names", longNames, "over 2 MiB"},
		{"22 MiB of nodes, four of them Spark's", podNodes(20000, sparkNodes), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "bomb"},
				Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning, CompressedNodes: compressed(t, c.write)}}
			input := wf.Status.CompressedNodes
			live, allocated := heapGrowth(func() any {
				got, _ := slim(wf)
				return got
			})
			runtime.KeepAlive(input)
			t.Logf("compressedNodes %d KiB: live heap %+d KiB, %d MiB allocated while reading", len(input)>>10, live>>10, allocated>>20)
			if live > maxHeapGrowth {
				t.Errorf("the live heap grew by %d KiB, want at most %d KiB", live>>10, maxHeapGrowth>>10)
			}
			if allocated > maxAllocated {
				t.Errorf("reading allocated %d MiB, want at most %d MiB", allocated>>20, maxAllocated>>20)
			}
			why := Refused(wf)
			switch {
			case c.why == "" && (why != "" || len(wf.Status.Nodes) != 3):
				t.Errorf("refused %q, kept %d nodes; want the three Spark nodes", why, len(wf.Status.Nodes))
			case c.why != "" && (!strings.Contains(why, c.why) || len(wf.Status.Nodes) != 0):
				t.Errorf("refused %q with %d nodes; want refused, saying %q, without nodes", why, len(wf.Status.Nodes), c.why)
			}
			if wf.Status.Phase != wfv1.WorkflowRunning || wf.Status.CompressedNodes != "" {
				t.Errorf("phase %q, compressedNodes of %d bytes; want the phase, no compressedNodes", wf.Status.Phase, len(wf.Status.CompressedNodes))
			}
		})
	}
}

// Of an open plugin node the cache also keeps the result Argo applied to
// it (message, outputs), which a withdrawn entry leaves behind
// (nodestatus.Applied); of a finished one, or one whose result is over
// maxAppliedNodeBytes, none.
func TestSlimKeepsTheAppliedResultOfOpenPluginNodes(t *testing.T) {
	uid := wfv1.Outputs{Parameters: []wfv1.Parameter{{Name: "driver-uid", Value: wfv1.AnyStringPtr("u-1")}}}
	nodes := wfv1.Nodes{
		"w-run":  {ID: "w-run", Name: "w.run", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodeRunning, Message: "RUNNING 2/2 executors", Outputs: &uid},
		"w-wait": {ID: "w-wait", Name: "w.wait", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodePending, Message: "QUEUED: waiting in LocalQueue q"},
		"w-done": {ID: "w-done", Name: "w.done", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodeSucceeded, Message: "COMPLETED", Outputs: &uid},
		"w-big":  {ID: "w-big", Name: "w.big", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodeRunning, Message: strings.Repeat("x", maxAppliedNodeBytes+1)},
	}
	for name, wf := range map[string]*wfv1.Workflow{
		"plain":      {Status: wfv1.WorkflowStatus{Nodes: nodes}},
		"compressed": {Status: wfv1.WorkflowStatus{CompressedNodes: compressed(t, podNodes(10, nodes))}},
	} {
		t.Run(name, func(t *testing.T) {
			got, _ := slim(wf)
			kept := got.(*wfv1.Workflow).Status.Nodes
			if n := kept["w-run"]; n.Message != "RUNNING 2/2 executors" || n.Outputs == nil || len(n.Outputs.Parameters) != 1 || n.Outputs.Parameters[0].Value.String() != "u-1" {
				t.Errorf("the running node kept %q, %+v; want its message and outputs", n.Message, n.Outputs)
			}
			if n := kept["w-wait"]; n.Message != "QUEUED: waiting in LocalQueue q" {
				t.Errorf("the pending node kept %q, want its message", n.Message)
			}
			if n := kept["w-done"]; n.Message != "" || n.Outputs != nil || n.Phase != wfv1.NodeSucceeded {
				t.Errorf("the finished node kept %s %q, %+v; want its phase alone", n.Phase, n.Message, n.Outputs)
			}
			if n := kept["w-big"]; n.Message != "" || n.Phase != wfv1.NodeRunning {
				t.Errorf("the node over the bound kept a message of %d bytes; want none", len(n.Message))
			}
			for id, n := range kept {
				if n.Type != wfv1.NodeTypePlugin && n.Message != "" {
					t.Errorf("node %s (%s) kept its message", id, n.Type)
				}
			}
		})
	}
}
