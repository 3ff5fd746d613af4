package nodestatus_test

import (
	"sort"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// The model's Argo (model_test.go): its agent and its controller, as the
// facts A1-A6 and C1-C9 of docs/node-identity.md say they behave.

// The agent: it asks about every listed task once per process (A1) and
// writes only replies with a phase (A3): the acknowledgement has none.
// The naive sidecar answers as inference did: with the result of the
// newest finished run of any identical node, which the agent writes.
func (m *model) agentAsk(node string) {
	if !m.agentUp || m.ts == nil || !m.ts.tasks[node] || m.asked[node] {
		return
	}
	m.asked[node] = true
	if !m.naive {
		return
	}
	for _, p := range m.sortedPods() {
		if p.Status.Phase == corev1.PodSucceeded {
			r := wfv1.NodeResult{Phase: wfv1.NodeSucceeded, Outputs: &wfv1.Outputs{Result: ptr(p.Labels[spark.LabelAppSelector])}}
			m.ts.status[node] = r
			m.ts.rv++
			m.logf("agent writes the naive answer %s for %s", appIn(r.Outputs), node)
			return
		}
	}
}

// agentFail is A5: the agent's call about a node meets only transport
// errors (the sidecar was down throughout its retries) and the agent
// writes Failed for it, unconditionally. The model lets it happen only to
// a node no final result was written for: over a final one it would flip
// the node whatever sparkplug does (the design's known limit, A5).
func (m *model) agentFail(node string) {
	if !m.agentUp || m.ts == nil || !m.ts.tasks[node] || m.asked[node] {
		return
	}
	if r, ok := m.ts.status[node]; ok && r.Phase.Completed() {
		return
	}
	if n := m.ctrl.nodes[node]; n.Fulfilled() {
		return
	}
	m.asked[node] = true
	m.agentFailed[node] = true
	m.ts.status[node] = wfv1.NodeResult{Phase: wfv1.NodeFailed, Message: "connection refused"}
	m.ts.rv++
	m.logf("agent fails %s after transport errors", node)
}

func ptr(s string) *string { return &s }

func (m *model) sortedPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range m.pods {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// The controller.

// operate is one operate of the controller (operator.go): every entry
// applied to its node (C1); for each fulfilled node, its entry removed,
// then its task (C3); then the Workflow updated, which may fail: then
// the controller lists the workflow again as persisted, and a node whose
// entry and task are gone is open again (plugin_template.go) and listed
// once more. A failed update leaves C3's gap open: a task removed or
// about to be, its node open. fail makes the update fail; half stops
// after the entries' removal (the task patch fails too).
func (m *model) operate(fail, half bool) {
	if !m.ctrlUp || m.ts == nil {
		return
	}
	for id, r := range m.ts.status {
		n, ok := m.ctrl.nodes[id]
		if !ok {
			continue // C2: the real controller errors; the model's writers never make one
		}
		n.Phase, n.Message, n.Outputs = r.Phase, r.Message, r.Outputs.DeepCopy()
		m.ctrl.nodes[id] = n
	}
	var removed []string
	for id, n := range m.ctrl.nodes {
		if _, has := m.ts.status[id]; has && n.Fulfilled() && m.ts.tasks[id] && !m.c4 {
			delete(m.ts.status, id)
			m.ts.rv++
			removed = append(removed, id)
			m.logf("controller removes the entry of %s", id)
		}
	}
	if !half {
		for _, id := range removed {
			delete(m.ts.tasks, id)
			m.ts.rv++
			m.logf("controller removes the task %s", id)
		}
	}
	m.ctrl.completed = true
	for _, n := range m.ctrl.nodes {
		if !n.Fulfilled() {
			m.ctrl.completed = false
		}
	}
	m.update(fail || half)
}

// update persists the controller's memory, or fails, and the controller
// lists the workflow again as persisted.
func (m *model) update(fail bool) {
	if fail {
		m.ctrl = m.wf.copy()
		m.logf("controller update fails")
	} else {
		m.ctrl.version = m.wf.version + 1
		m.wf = m.ctrl.copy()
		if m.wf.completed && !m.ts.completed && !m.c4 {
			m.ts.completed = true
			m.ts.rv++
		}
	}
	for id, n := range m.ctrl.nodes {
		if !m.ts.tasks[id] && !n.Fulfilled() {
			m.ts.tasks[id] = true // an open node is listed (again)
			m.ts.rv++
		}
	}
	m.check()
}

// recreate deletes the TaskSet and makes it anew from the open nodes.
func (m *model) recreate() {
	if !m.ctrlUp {
		return
	}
	uid := m.ts.uid + "'"
	m.ts = &taskSet{uid: uid, rv: m.ts.rv + 1, tasks: map[string]bool{}, status: map[string]wfv1.NodeResult{}}
	for id, n := range m.ctrl.nodes {
		if !n.Fulfilled() {
			m.ts.tasks[id] = true
		}
	}
	m.asked = map[string]bool{} // A6: the agent exits when its TaskSet goes
	m.logf("TaskSet re-created")
}

// retry is `argo retry`: a new startedAt, the failed nodes Pending again
// under their ids (C9), listed again.
func (m *model) retry() {
	m.wf.startedAt = m.now
	m.wf.completed = false
	for id, n := range m.wf.nodes {
		if n.Phase == wfv1.NodeFailed {
			m.wf.nodes[id] = wfv1.NodeStatus{ID: id, Name: n.Name, Type: n.Type, Phase: wfv1.NodePending}
			m.ts.tasks[id] = true
		}
	}
	m.ts.completed = false
	m.ts.rv++
	m.wf.version++
	m.ctrl = m.wf.copy()
	m.asked = map[string]bool{}
	m.logf("argo retry")
}
