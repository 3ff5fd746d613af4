package ui

import (
	"fmt"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/logs"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Choose is the Spark node of wf whose UI is forwarded: the one arg names
// (logs.FindNode: id, name or display name), or, when arg is empty, the
// one Spark node that runs. A node that is not running has no UI: the
// error says where its application can still be read.
func Choose(wf *wfv1.Workflow, arg string) (logs.Node, error) {
	nodes := logs.SparkNodes(wf, nil)
	if arg != "" {
		n, err := logs.FindNode(wf, nodes, arg)
		if err != nil {
			return logs.Node{}, err
		}
		if n.Phase != wfv1.NodeRunning {
			return logs.Node{}, notRunning(n)
		}
		return n, nil
	}
	var running []logs.Node
	for _, n := range nodes {
		if n.Phase == wfv1.NodeRunning {
			running = append(running, n)
		}
	}
	switch len(running) {
	case 1:
		return running[0], nil
	case 0:
		if len(nodes) == 0 {
			return logs.Node{}, fmt.Errorf("workflow %s has no Spark nodes", wf.Name)
		}
		return logs.Node{}, fmt.Errorf("workflow %s has no running Spark node: %s", wf.Name, phases(nodes))
	}
	return logs.Node{}, fmt.Errorf("workflow %s has %d running Spark nodes: give one (sparkplug ui %s NODE): %s", wf.Name, len(running), wf.Name, phases(running))
}

// maxListed is how many nodes an error lists.
const maxListed = 10

func phases(nodes []logs.Node) string {
	var parts []string
	for i, n := range nodes {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(nodes)-maxListed))
			break
		}
		parts = append(parts, n.Name+" "+phaseOf(n.Phase))
	}
	return strings.Join(parts, ", ")
}

func phaseOf(p wfv1.NodePhase) string {
	if p == "" {
		return "not started"
	}
	return string(p)
}

// notRunning is the error of a node whose UI cannot be forwarded.
func notRunning(n logs.Node) error {
	if !n.Finished {
		return fmt.Errorf("node %s is %s, not running yet: its Spark UI starts with its driver; sparkplug get -w shows when it runs", n.Name, phaseOf(n.Phase))
	}
	msg := fmt.Sprintf("node %s is %s, not running: its Spark UI ended with its driver", n.Name, phaseOf(n.Phase))
	if n.HistoryUI != "" {
		return fmt.Errorf("%s; the application in the Spark History Server: %s", msg, n.HistoryUI)
	}
	return fmt.Errorf("%s; the Spark History Server shows the application when it wrote event logs (spark.eventLog.enabled)", msg)
}

// CheckDriver says why pod p (nil: not found), which node n reports as
// its driver, cannot serve its UI: it is not the driver sparkplug
// launched for the workflow (another pod took its name), it is gone, or
// its driver container is not running. Nil when it can.
func CheckDriver(wf *wfv1.Workflow, n logs.Node, p *corev1.Pod) error {
	ref := spark.WorkflowRef{Name: wf.Name, Namespace: wf.Namespace, UID: string(wf.UID)}
	switch {
	case n.RecordedDriver == "":
		return fmt.Errorf("node %s has no driver yet (its outputs name none); sparkplug get -w shows when it has", n.Name)
	case p == nil:
		return fmt.Errorf("driver %s of node %s was deleted: its Spark UI went with it", n.RecordedDriver, n.Name)
	case !driverpod.OwnDriver(p, ref):
		return fmt.Errorf("pod %s is not the driver sparkplug launched for node %s (its name, owner or labels differ): not forwarding to it", p.Name, n.Name)
	case p.DeletionTimestamp != nil:
		return fmt.Errorf("driver %s of node %s is being deleted", p.Name, n.Name)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != spark.DriverContainerName {
			continue
		}
		switch {
		case cs.State.Running != nil:
			return nil
		case cs.State.Terminated != nil:
			return fmt.Errorf("driver %s of node %s has ended (%s): its Spark UI ended with it", p.Name, n.Name, reasonOr(cs.State.Terminated.Reason, "exit code "+fmt.Sprint(cs.State.Terminated.ExitCode)))
		case cs.State.Waiting != nil:
			return fmt.Errorf("driver %s of node %s has not started yet (%s): its Spark UI is not up", p.Name, n.Name, reasonOr(cs.State.Waiting.Reason, "waiting"))
		}
	}
	return fmt.Errorf("driver %s of node %s has not started yet (%s): its Spark UI is not up", p.Name, n.Name, reasonOr(string(p.Status.Phase), "Pending"))
}

func reasonOr(reason, fallback string) string {
	if reason == "" {
		return fallback
	}
	return reason
}

// UIPort is the port of driver p that serves the Spark UI: its driver
// container's port named spark-ui (spark.ui.port, which a UI Service of
// sparkUIOptions forwards to), else Spark's default, 4040.
func UIPort(p *corev1.Pod) int32 {
	for _, c := range p.Spec.Containers {
		if c.Name != spark.DriverContainerName {
			continue
		}
		for _, port := range c.Ports {
			if port.Name == spark.UIPortName && port.ContainerPort > 0 {
				return port.ContainerPort
			}
		}
	}
	return spark.UIPort
}
