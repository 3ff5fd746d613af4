//go:build integration

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// A client-mode request creates the driver pod running spark-submit
// --deploy-mode client, its conf ConfigMap (spark-defaults.conf), the
// headless driver Service and the UI Service, all three owned by the
// driver; the node follows the driver to Succeeded as in cluster mode.
func TestClientModeLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "client-mode")
	tmpl := template(t, "spark-pi-client", strings.Replace(sparkPi, "mode: cluster", "mode: client", 1))
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending {
		t.Fatalf("first reply: %s; want Pending", describe(r))
	}
	d := e.onlyDriver()
	if want := fmt.Sprintf("http://%s.%s.svc:4040", objects.UIServiceName(d.Name), e.ns); param(r, "spark-ui") != want {
		t.Fatalf("spark-ui output %q, want the client-mode UI Service %q", param(r, "spark-ui"), want)
	}
	checkDriverMetadata := func() {
		if d.Labels[spark.LabelWorkflowUID] != string(e.wf.UID) || len(d.OwnerReferences) != 1 || d.OwnerReferences[0].UID != e.wf.UID {
			t.Fatalf("driver labels %v owners %+v, want the workflow's", d.Labels, d.OwnerReferences)
		}
	}
	checkDriverMetadata()
	c := d.Spec.Containers[0]
	if args := strings.Join(c.Args, " "); c.Name != spark.DriverContainerName || !strings.HasPrefix(args, spark.ClientSparkSubmit+" --master k8s://https://kubernetes.default.svc:443 --deploy-mode client --properties-file /opt/spark/conf/spark-defaults.conf") {
		t.Fatalf("driver container %s runs %q", c.Name, args)
	}

	ctx := context.Background()
	core := testCluster.Client.CoreV1()
	cm, err := core.ConfigMaps(e.ns).Get(ctx, objects.ConfigMapOf(&d), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap: %v", err)
	}
	defaults := cm.Data[spark.ClientDefaultsFile]
	for _, want := range []string{
		"spark.submit.deployMode=client",
		"spark.kubernetes.driver.pod.name=" + d.Name,
		"spark.driver.host=" + objects.ServiceName(d.Name) + "." + e.ns + ".svc",
		"spark.kubernetes.executor.podTemplateFile=/opt/spark/conf/executor-pod-template.yaml",
	} {
		if !strings.Contains(defaults, want+"\n") {
			t.Errorf("spark-defaults.conf lacks %s:\n%s", want, defaults)
		}
	}
	if _, ok := cm.Data[spark.ClientEnvFile]; !ok {
		t.Errorf("ConfigMap has no %s", spark.ClientEnvFile)
	}
	headless, err := core.Services(e.ns).Get(ctx, objects.ServiceName(d.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("driver Service: %v", err)
	}
	if headless.Spec.ClusterIP != corev1.ClusterIPNone || headless.Spec.Selector[spark.LabelAppSelector] != d.Labels[spark.LabelAppSelector] || headless.Spec.Selector[spark.LabelRole] != spark.RoleDriver {
		t.Errorf("driver Service clusterIP %q selector %v: want headless, this driver only", headless.Spec.ClusterIP, headless.Spec.Selector)
	}
	ui, err := core.Services(e.ns).Get(ctx, objects.UIServiceName(d.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("UI Service: %v", err)
	}
	if len(ui.Spec.Ports) != 1 || ui.Spec.Ports[0].Port != spark.UIPort {
		t.Errorf("UI Service ports %+v, want %d", ui.Spec.Ports, spark.UIPort)
	}
	for _, obj := range []metav1.Object{cm, headless, ui} {
		if refs := obj.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].UID != d.UID {
			t.Errorf("%s owners %+v, want the driver pod %s", obj.GetName(), refs, d.UID)
		}
	}
	svcs, err := core.Services(e.ns).List(ctx, metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID})
	if err != nil || len(svcs.Items) != 2 {
		t.Fatalf("services of the workflow: %v (err %v), want the driver's and the UI's", svcs, err)
	}

	e.setDriverStatus(d.Name, running(true))
	e.eventually(tmpl, "Running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r = e.eventually(tmpl, "Succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	if r.Node.Outputs == nil || r.Node.Outputs.Result == nil || *r.Node.Outputs.Result != d.Labels[spark.LabelAppSelector] || param(r, "driver-pod") != d.Name {
		t.Fatalf("succeeded reply %s: want the application id and the driver pod", describe(r))
	}
	if n := len(e.drivers()); n != 1 {
		t.Fatalf("%d driver pods, want 1", n)
	}
}
