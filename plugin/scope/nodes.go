package scope

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
)

// What the caches keep of a Workflow's nodes is what a pass reads of
// them: of its plugin nodes (a Spark node is one) the id, name, type and
// what says they are fulfilled, and of its Retry nodes those that may be
// a plugin attempt's parent in a loop (InLoop). A controller
// caches every Workflow of its namespaces, whatever they run: each of
// them costs the bytes of a few plugin nodes, not of all its nodes.
//
// Argo gzips the nodes of a Workflow over 1 MiB into
// status.compressedNodes (base64), which can hide a compression bomb, or
// plain nodes too many to keep. They are read as a stream, a node at a
// time, within three bounds; a Workflow over one is refused
// (AnnotationRefused): its nodes are not kept, and the others' steps
// go on.
const (
	// maxNodesJSON bounds the decompressed JSON read of one Workflow's
	// nodes: what Argo stores compressed fits in etcd's 1.5 MiB, some
	// 10 MiB of node JSON at gzip's usual ratio on it. It bounds the
	// time a transform spends on a bomb, not memory, which the next two
	// bound.
	maxNodesJSON = 32 << 20
	// maxNodeJSON bounds the JSON of one node, the most held at once
	// while reading (the decoder's buffer is at most about twice it): an
	// Argo node is a few KiB, its outputs' parameters included.
	maxNodeJSON = 1 << 20
	// maxKeptBytes bounds the ids and names of the nodes kept of one
	// Workflow (with nodeOverhead each): some ten thousand Spark nodes.
	maxKeptBytes = 2 << 20
	// maxAppliedBytes bounds the applied results (message and outputs)
	// kept of one Workflow's open plugin nodes, and maxAppliedNodeBytes
	// those of one node: a node past either keeps none, and its entry is
	// only not withdrawn (nodestatus.Applied). A Spark node's is a few
	// hundred bytes.
	maxAppliedBytes     = 4 << 20
	maxAppliedNodeBytes = 4 << 10
)

// nodeOverhead is what a kept node costs besides its id and name: its
// NodeStatus and map entry.
const nodeOverhead = 96

// AnnotationRefused is set, on the cached copy of a Workflow only, to
// why its nodes were not read: they are over a bound of nodes.go, or not
// readable. Its Spark nodes are not run.
const AnnotationRefused = "sparkplug.io/refused"

// Refused is why the cache holds none of wf's nodes, "" when it holds
// them (or wf is not a cached copy).
func Refused(wf *wfv1.Workflow) string {
	if wf == nil {
		return ""
	}
	return wf.Annotations[AnnotationRefused]
}

// The reasons a Workflow's nodes are refused.
var (
	errNodesTooLarge = fmt.Errorf("its nodes' JSON is over %d MiB once decompressed", maxNodesJSON>>20)
	errNodeTooLarge  = fmt.Errorf("one of its nodes' JSON is over %d MiB", maxNodeJSON>>20)
	errTooManyNodes  = fmt.Errorf("its plugin nodes' ids and names are over %d MiB", maxKeptBytes>>20)
)

// nodeView is what is decoded of a node: what InLoop and Fulfilled read,
// when it started, which says what a run of it can be (execute's
// trust.go), and, of an open plugin node, the result Argo applied to it
// (message, outputs: nodestatus.Applied).
type nodeView struct {
	Name             string                `json:"name"`
	Type             wfv1.NodeType         `json:"type"`
	Phase            wfv1.NodePhase        `json:"phase"`
	StartedAt        metav1.Time           `json:"startedAt,omitempty"`
	TaskResultSynced *bool                 `json:"taskResultSynced,omitempty"`
	Daemoned         *bool                 `json:"daemoned,omitempty"`
	Message          capped[string]        `json:"message,omitempty"`
	Outputs          capped[*wfv1.Outputs] `json:"outputs,omitempty"`
}

// capped decodes a node's message or outputs only where they may be
// kept: an open plugin node's (node: its view, whose type and phase
// Argo's JSON, in NodeStatus's field order, gives before them; none
// known: nothing is kept), within maxAppliedNodeBytes of JSON (over: past
// it). The messages of thousands of Pod nodes are never copied.
type capped[T any] struct {
	node *nodeView
	v    T
	over bool
}

func (c *capped[T]) UnmarshalJSON(b []byte) error {
	if !c.node.mayApply() || len(b) > maxAppliedNodeBytes {
		c.over = true
		return nil
	}
	return json.Unmarshal(b, &c.v)
}

// mayApply: n is an open plugin node (Pending or Running), whose
// applied result is kept; false for none.
func (n *nodeView) mayApply() bool {
	return n != nil && n.Type == wfv1.NodeTypePlugin && (n.Phase == wfv1.NodePending || n.Phase == wfv1.NodeRunning)
}

// keptNodes gathers the nodes kept of one Workflow within maxKeptBytes.
type keptNodes struct {
	plugin wfv1.Nodes
	// retries are the Retry nodes that may be a plugin attempt's parent
	// (a loop child's name), by name: which are is known once every node
	// has been read, in any order.
	retries map[string]wfv1.NodeStatus
	bytes   int
	// applied is the bytes of applied results kept (maxAppliedBytes).
	applied int
}

func (k *keptNodes) add(id string, n nodeView) error {
	loopRetry := n.Type == wfv1.NodeTypeRetry && identity.LoopChild(n.Name)
	if n.Type != wfv1.NodeTypePlugin && !loopRetry {
		return nil
	}
	k.bytes += len(id) + len(n.Name) + nodeOverhead
	if k.bytes > maxKeptBytes {
		return errTooManyNodes
	}
	s := wfv1.NodeStatus{ID: id, Name: n.Name, Type: n.Type, Phase: n.Phase, StartedAt: n.StartedAt, TaskResultSynced: n.TaskResultSynced, Daemoned: n.Daemoned}
	if n.mayApply() {
		if size := appliedSize(n); !n.Message.over && !n.Outputs.over && size <= maxAppliedNodeBytes && k.applied+size <= maxAppliedBytes {
			k.applied += size
			s.Message, s.Outputs = n.Message.v, n.Outputs.v
		}
	}
	if loopRetry {
		if k.retries == nil {
			k.retries = map[string]wfv1.NodeStatus{}
		}
		k.retries[n.Name] = s
		return nil
	}
	if k.plugin == nil {
		k.plugin = wfv1.Nodes{}
	}
	k.plugin[id] = s
	return nil
}

// appliedSize is about what a node's message and outputs take kept.
func appliedSize(n nodeView) int {
	size := len(n.Message.v)
	if o := n.Outputs.v; o != nil {
		size += 64
		if o.Result != nil {
			size += len(*o.Result)
		}
		if o.ExitCode != nil {
			size += len(*o.ExitCode)
		}
		for _, p := range o.Parameters {
			size += 48 + len(p.Name)
			if p.Value != nil {
				size += len(p.Value.String())
			}
		}
		if len(o.Artifacts) > 0 {
			size += maxAppliedNodeBytes + 1 // a Spark node has none: not kept
		}
	}
	return size
}

// nodes are the plugin nodes and the Retry parents of their attempts;
// nil when there are none.
func (k *keptNodes) nodes() wfv1.Nodes {
	for _, n := range k.plugin {
		if parent, ok := identity.AttemptParent(n.Name); ok {
			if r, ok := k.retries[parent]; ok {
				k.plugin[r.ID] = r
			}
		}
	}
	return k.plugin
}

// keptOf keeps of plain nodes (status.nodes) what keptNodes keeps.
func keptOf(nodes wfv1.Nodes) (wfv1.Nodes, error) {
	var k keptNodes
	for id, n := range nodes {
		v := nodeView{Name: n.Name, Type: n.Type, Phase: n.Phase, StartedAt: n.StartedAt, TaskResultSynced: n.TaskResultSynced, Daemoned: n.Daemoned,
			Message: capped[string]{v: n.Message}, Outputs: capped[*wfv1.Outputs]{v: n.Outputs}}
		if err := k.add(id, v); err != nil {
			return nil, err
		}
	}
	return k.nodes(), nil
}

// readCompressed reads compressedNodes (base64 of gzipped JSON: Argo's
// workflow/packer) a node at a time, within maxNodesJSON and
// maxNodeJSON, and keeps what keptNodes keeps. The standard gzip reads
// the format Argo's own library writes.
func readCompressed(compressed string) (wfv1.Nodes, error) {
	gz, err := gzip.NewReader(base64.NewDecoder(base64.StdEncoding, strings.NewReader(compressed)))
	if err != nil {
		return nil, fmt.Errorf("its compressed nodes are not readable: %w", err)
	}
	defer gz.Close()
	r := &boundedReader{r: gz}
	dec := json.NewDecoder(r)
	var k keptNodes
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	for dec.More() {
		r.mark()
		t, err := dec.Token()
		if err != nil {
			return nil, notReadable(err)
		}
		id, _ := t.(string)
		var n nodeView
		n.Message.node, n.Outputs.node = &n, &n
		if err := dec.Decode(&n); err != nil {
			return nil, notReadable(err)
		}
		if err := k.add(id, n); err != nil {
			return nil, err
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	return k.nodes(), nil
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return notReadable(err)
	}
	if t != d {
		return fmt.Errorf("its compressed nodes are not a JSON object of nodes")
	}
	return nil
}

// notReadable says why compressedNodes could not be read: a bound, or
// what is wrong with them.
func notReadable(err error) error {
	if errors.Is(err, errNodesTooLarge) || errors.Is(err, errNodeTooLarge) {
		return err
	}
	return fmt.Errorf("its compressed nodes are not readable: %w", err)
}

// boundedReader reads at most maxNodesJSON in all, and maxNodeJSON since
// its last mark (the start of a node).
type boundedReader struct {
	r           io.Reader
	read, since int
}

func (b *boundedReader) mark() { b.since = 0 }

func (b *boundedReader) Read(p []byte) (int, error) {
	switch {
	case b.read >= maxNodesJSON:
		return 0, errNodesTooLarge
	case b.since >= maxNodeJSON:
		return 0, errNodeTooLarge
	}
	if room := min(maxNodesJSON-b.read, maxNodeJSON-b.since); len(p) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	b.read += n
	b.since += n
	return n, err
}
