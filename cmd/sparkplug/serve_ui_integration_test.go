//go:build integration

package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestUIServiceIsCreatedAndOwnedByTheDriver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ui")
	tmpl := template(t, "spark-pi", sparkPi+"sparkUIOptions:\n  servicePort: 8080\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	d := e.onlyDriver()
	ui, err := testCluster.Client.CoreV1().Services(e.ns).Get(context.Background(), objects.UIServiceName(d.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("UI service: %v", err)
	}
	if refs := ui.OwnerReferences; len(refs) != 1 || refs[0].UID != d.UID {
		t.Fatalf("UI service owners %+v, want the driver", refs)
	}
	want := fmt.Sprintf("http://%s.%s.svc:8080", ui.Name, e.ns)
	if got := param(r, "spark-ui"); got != want {
		t.Fatalf("spark-ui output %q, want %q", got, want)
	}
}

// With --ingress-url-format and --ingress-class-name, a step with a UI
// Service gets the Spark UI's Ingress, its driverIngressOptions a Service
// and an Ingress each, all owned by the driver and labelled with the
// workflow; the URL's path is spark.ui.proxyBase and the spark-ui output
// the Ingress's URL. Ingresses lost to a restart between the driver and
// them come back as the other companions do; the driver's deletion
// collects them.
func TestIngressesAreCreatedOwnedAndRestored(t *testing.T) {
	t.Parallel()
	flags := func(o *sidecar.Config) {
		o.Core.IngressURLFormat = "spark.example.com/{{$appNamespace}}/{{$appName}}"
		o.Core.IngressClassName = "nginx"
	}
	e := newEnv(t, "ingress", flags)
	tmpl := template(t, "spark-pi", sparkPi+`sparkUIOptions:
  servicePort: 80
  ingressTLS:
    - hosts: [spark.example.com]
      secretName: spark-tls
driverIngressOptions:
  - servicePort: 15002
    ingressURLFormat: "{{$appName}}-connect.example.com"
`)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	d := e.onlyDriver()
	run := objects.RunName(d.Name)
	ctx := context.Background()
	net := testCluster.Client.NetworkingV1().Ingresses(e.ns)
	core := testCluster.Client.CoreV1()

	if want := "https://spark.example.com/" + e.ns + "/" + run; param(r, "spark-ui") != want {
		t.Errorf("spark-ui output %q, want the Ingress's URL %q", param(r, "spark-ui"), want)
	}
	cm, err := core.ConfigMaps(e.ns).Get(ctx, objects.ConfigMapOf(&d), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if props := cm.Data[spark.PropertiesFile]; !strings.Contains(props, "spark.ui.proxyBase=/"+e.ns+"/"+run+"\n") {
		t.Errorf("spark.properties has no spark.ui.proxyBase of the Ingress's path:\n%s", props)
	}
	check := func(when string) {
		t.Helper()
		list, err := net.List(ctx, metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID + "=" + string(e.wf.UID)})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]networkingv1.Ingress{}
		for _, ing := range list.Items {
			got[ing.Name] = ing
		}
		want := map[string]struct{ host, path, service string }{
			run + "-ui-ingress": {"spark.example.com", "/" + e.ns + "/" + run + "(/|$)(.*)", objects.UIServiceName(d.Name)},
			run + "-ing-15002":  {run + "-connect.example.com", "", run + "-driver-15002"},
		}
		if len(got) != len(want) {
			t.Fatalf("%s: Ingresses %v, want %d", when, slices.Collect(maps.Keys(got)), len(want))
		}
		for name, w := range want {
			ing, ok := got[name]
			if !ok {
				t.Fatalf("%s: no Ingress %s", when, name)
			}
			rule := ing.Spec.Rules[0]
			if rule.Host != w.host || rule.HTTP.Paths[0].Path != w.path || rule.HTTP.Paths[0].Backend.Service.Name != w.service ||
				ptr.Deref(ing.Spec.IngressClassName, "") != "nginx" {
				t.Errorf("%s: Ingress %s: class %v, %s%s to %s; want nginx, %s%s to %s", when, name, ing.Spec.IngressClassName,
					rule.Host, rule.HTTP.Paths[0].Path, rule.HTTP.Paths[0].Backend.Service.Name, w.host, w.path, w.service)
			}
			if refs := ing.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].UID != d.UID {
				t.Errorf("%s: Ingress %s owners %+v, want the driver", when, name, refs)
			}
			if _, err := core.Services(e.ns).Get(ctx, w.service, metav1.GetOptions{}); err != nil {
				t.Errorf("%s: the Service of Ingress %s: %v", when, name, err)
			}
		}
	}
	check("after the launch")

	// What a kill between the driver and its Ingresses leaves; a
	// restarted plugin with the same flags puts them back.
	for _, name := range []string{run + "-ui-ingress", run + "-ing-15002"} {
		if err := net.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.stop()
	e.at(startAnotherServer(t, e, flags)).execute(tmpl)
	// The node's entry is there from before the restart: wait for the
	// restarted plugin's pass.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := net.List(ctx, metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID + "=" + string(e.wf.UID)})
		return err == nil && len(list.Items) == 2, err
	})
	if err != nil {
		t.Fatalf("the restarted plugin did not make the Ingresses again: %v", err)
	}
	check("after a restart")

	if err := core.Pods(e.ns).Delete(ctx, d.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := net.List(ctx, metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID + "=" + string(e.wf.UID)})
		return err == nil && len(list.Items) == 0, err
	})
	if err != nil {
		t.Fatalf("the driver's Ingresses outlived it: %v", err)
	}
}

// A Role from before Ingresses (it may not list them) still serves every
// step without one: the workflow's cache does not wait for Ingresses. A
// step with one runs without it, and a Warning Event says so.
func TestARoleWithoutIngressesServesStepsWithoutThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "no-ingress-rbac")
	e.updateRole(func(role *rbacv1.Role) {
		role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "ingresses") })
	})
	plain := template(t, "spark-pi", sparkPi)
	withIngress := template(t, "spark-pi-ui", sparkPi+"sparkUIOptions: {}\nsparkplug:\n  uiIngress:\n    urlFormat: \"{{$appName}}.spark.example.com\"\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": plain, "node-2": withIngress})
	start := time.Now()
	if r := e.execute(plain); r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMITTED") {
		t.Fatalf("a step without an Ingress: %s; want its driver submitted", describe(r))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the first request took %s: the cache waited for Ingresses it may not list", d)
	}
	r := e.execute(withIngress)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMITTED") {
		t.Fatalf("a step with an Ingress: %s; want its driver submitted", describe(r))
	}
	e.waitEvent("SparkObjectRefused", "Ingress")
}
