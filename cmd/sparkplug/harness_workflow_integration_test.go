//go:build integration

// The harness's Workflow and its WorkflowTaskSet: the nodes it lists, the
// workflow's status and shutdown as the controller writes them, and posting
// a request as the agent does.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// setTasks writes the WorkflowTaskSet's open nodes as the controller
// does, and lists them in the Workflow's status as Pending plugin nodes
// of a started workflow (the node names as Argo makes them: the
// workflow's name, a dot, the node id), as the controller does before it
// lists a task.
func (e *env) setTasks(tasks map[string]*wfv1.Template) {
	e.t.Helper()
	ctx := context.Background()
	e.tasks = tasks
	e.updateWorkflow(func(wf *wfv1.Workflow) {
		started(wf)
		if wf.Status.Nodes == nil {
			wf.Status.Nodes = wfv1.Nodes{}
		}
		for id, tmpl := range tasks {
			if _, ok := wf.Status.Nodes[id]; !ok {
				wf.Status.Nodes[id] = wfv1.NodeStatus{ID: id, Name: e.wf.Name + "." + id, Type: wfv1.NodeTypePlugin,
					TemplateName: tmpl.Name, Phase: wfv1.NodePending, StartedAt: metav1.Now()}
			}
		}
	})
	spec := wfv1.WorkflowTaskSetSpec{Tasks: map[string]wfv1.Template{}}
	for id, tmpl := range tasks {
		spec.Tasks[id] = *tmpl
	}
	ts := &wfv1.WorkflowTaskSet{
		ObjectMeta: metav1.ObjectMeta{Name: e.wf.Name, Namespace: e.ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: e.wf.Name, UID: e.wf.UID}}},
		Spec: spec,
	}
	client := e.wfc.ArgoprojV1alpha1().WorkflowTaskSets(e.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing, err := client.Get(ctx, e.wf.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = client.Create(ctx, ts, metav1.CreateOptions{})
		case err == nil:
			existing.Spec = spec
			_, err = client.Update(ctx, existing, metav1.UpdateOptions{})
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// started makes wf a started, running workflow, as the controller does
// when it starts one: status.startedAt (the incarnation of its nodes'
// runs) and phase Running, unless it has them.
func started(wf *wfv1.Workflow) {
	if wf.Status.StartedAt.IsZero() {
		wf.Status.StartedAt = metav1.Now()
	}
	if wf.Status.Phase == "" {
		wf.Status.Phase = wfv1.WorkflowRunning
	}
}

// updateWorkflow changes the env's Workflow, object and status (the
// Workflow CRD has no status subresource), as Argo's controller does:
// read, change, update, and again from the read on a conflict.
func (e *env) updateWorkflow(change func(*wfv1.Workflow)) *wfv1.Workflow {
	e.t.Helper()
	ctx := context.Background()
	wfs := e.wfc.ArgoprojV1alpha1().Workflows(e.ns)
	var updated *wfv1.Workflow
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		wf, err := wfs.Get(ctx, e.wf.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(wf)
		updated, err = wfs.Update(ctx, wf, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return updated
}

// start starts the env's Workflow (started) without listing a task, and
// returns its incarnation.
func (e *env) start() string {
	e.t.Helper()
	e.updateWorkflow(started)
	return e.incarnation()
}

// incarnation is the Workflow's status.startedAt in RFC 3339: the
// incarnation sparkplug launches its nodes' runs in, which their names
// hash and their annotation sparkplug.io/incarnation carries.
func (e *env) incarnation() string {
	e.t.Helper()
	wf, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Get(context.Background(), e.wf.Name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if wf.Status.StartedAt.IsZero() {
		e.t.Fatal("the workflow has not started: no incarnation yet")
	}
	return wf.Status.StartedAt.UTC().Format(time.RFC3339)
}

// names are the names of attempt of node's run in the Workflow's current
// incarnation, as sparkplug gives them.
func (e *env) names(node string, attempt int) objects.Names {
	e.t.Helper()
	return objects.NamesFor(objects.Run{Workflow: e.ref(), NodeID: node, Attempt: attempt, Incarnation: e.incarnation()})
}

func (e *env) ref() spark.WorkflowRef {
	return spark.WorkflowRef{Name: e.wf.Name, Namespace: e.ns, UID: string(e.wf.UID)}
}

// at is the env as served by the plugin server at url (another process
// over the same cluster): the same namespace and Workflow, and the tasks
// setTasks last wrote.
func (e *env) at(url string) *env {
	c := *e
	c.url, c.requests, c.stop = url, &atomic.Int64{}, nil
	return &c
}

// updateRole changes the plugin's Role (manifests/rbac.yaml's), reading
// it again on a conflict.
func (e *env) updateRole(change func(*rbacv1.Role)) {
	e.t.Helper()
	ctx := context.Background()
	roles := testCluster.Client.RbacV1().Roles(e.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		role, err := roles.Get(ctx, "spark-executor-plugin", metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(role)
		_, err = roles.Update(ctx, role, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// taskSet reads the Workflow's TaskSet.
func (e *env) taskSet() *wfv1.WorkflowTaskSet {
	e.t.Helper()
	ts, err := e.wfc.ArgoprojV1alpha1().WorkflowTaskSets(e.ns).Get(context.Background(), e.wf.Name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return ts
}

type response struct {
	status int
	body   string
	reply  executor.ExecuteTemplateReply
}

func (e *env) post(token string, body []byte) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/api/v1/template.execute", bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, body: string(b)}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &r.reply); err != nil {
			e.t.Fatalf("decode reply %s: %v", b, err)
		}
	}
	return r
}

func describe(r executor.ExecuteTemplateReply) string {
	b, _ := json.Marshal(r)
	return string(b)
}

func param(r executor.ExecuteTemplateReply, name string) string {
	if r.Node == nil || r.Node.Outputs == nil {
		return ""
	}
	for _, p := range r.Node.Outputs.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String()
		}
	}
	return ""
}

const sparkPi = `
type: Scala
mode: cluster
image: spark:3.5.3
mainClass: org.apache.spark.examples.SparkPi
mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
arguments: ["1000"]
sparkVersion: 3.5.3
driver:
  cores: 1
  memory: 512m
  serviceAccount: spark
executor:
  cores: 1
  instances: 2
  memory: 512m
`

func (e *env) shutdownWorkflow(how wfv1.ShutdownStrategy) {
	e.t.Helper()
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"shutdown": how}})
	if _, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Patch(context.Background(), e.wf.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}
