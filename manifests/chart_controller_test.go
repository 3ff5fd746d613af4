//go:build chart

package manifests

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// ackContainer is the acknowledger container of a plugin ConfigMap,
// checked to be controller mode's: no ServiceAccount token.
func ackContainer(t *testing.T, objs map[string]*unstructured.Unstructured, ns string) corev1.Container {
	t.Helper()
	var cm corev1.ConfigMap
	typed(t, objs["ConfigMap "+ns+"/"+serviceAccount], &cm)
	if cm.Labels[labelKeyConfigMapType] != "ExecutorPlugin" {
		t.Errorf("%s: plugin ConfigMap labels %v", ns, cm.Labels)
	}
	if got := cm.Data["sidecar.automountServiceAccountToken"]; got != "false" {
		t.Errorf("%s: sidecar.automountServiceAccountToken = %q, want false: the acknowledger calls no Kubernetes API", ns, got)
	}
	return sidecarContainer(t, &cm)
}

// TestChartController renders controller mode with every value set
// (controller.values.yaml): in each job namespace the acknowledger's
// plugin ConfigMap and the controller's Role, exactly what a sidecar and
// the monitor need together, bound to the controller's ServiceAccount in
// the release's namespace, and the optional spark-submit and log archive
// Roles bound to it too; in the release's namespace the Deployment with
// serve's step flags (and none of the sidecar's own), its Lease's Role,
// Service, NetworkPolicy, ServiceMonitor, alerts and dashboard. No
// ClusterRole, no sidecar RBAC, no monitor.
func TestChartController(t *testing.T) {
	objs := objects(t, render(t, chartDir, "controller.values.yaml"))
	const name = "sparkplug-controller"
	var keys []string
	for k, o := range objs {
		keys = append(keys, k)
		if o.GetNamespace() == "" {
			t.Errorf("%s is cluster-scoped", k)
		}
		if strings.HasPrefix(k, "Cluster") {
			t.Errorf("%s rendered in controller mode", k)
		}
		if o.GetLabels()["app.kubernetes.io/component"] == "monitor" {
			t.Errorf("%s: the monitor in controller mode", k)
		}
	}
	slices.Sort(keys)
	want := []string{
		"ConfigMap " + systemNamespace + "/" + name + "-dashboard",
		"ConfigMap team-a/spark-executor-plugin",
		"ConfigMap team-b/spark-executor-plugin",
		"Deployment " + systemNamespace + "/" + name,
		"NetworkPolicy " + systemNamespace + "/" + name,
		"PodDisruptionBudget " + systemNamespace + "/" + name,
		"PrometheusRule " + systemNamespace + "/" + name,
		"Role team-a/" + name,
		"Role " + systemNamespace + "/" + name + "-leader-election",
		"Role team-a/" + name + "-log-archive",
		"Role team-a/" + name + "-spark-submit",
		"Role team-b/" + name,
		"Role team-b/" + name + "-log-archive",
		"Role team-b/" + name + "-spark-submit",
		"RoleBinding team-a/" + name,
		"RoleBinding " + systemNamespace + "/" + name + "-leader-election",
		"RoleBinding team-a/" + name + "-log-archive",
		"RoleBinding team-a/" + name + "-spark-submit",
		"RoleBinding team-b/" + name,
		"RoleBinding team-b/" + name + "-log-archive",
		"RoleBinding team-b/" + name + "-spark-submit",
		"Service " + systemNamespace + "/" + name,
		"ServiceAccount " + systemNamespace + "/" + name,
		"ServiceMonitor " + systemNamespace + "/" + name,
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}

	wantRules := sortedAccesses(controllerRules(t))
	sparkSubmit := manifestsRoles(t, "spark-submit/rbac.yaml")["spark-executor-plugin-spark-submit"]
	controllerSA := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: systemNamespace}}
	for _, ns := range []string{"team-a", "team-b"} {
		var role rbacv1.Role
		typed(t, objs["Role "+ns+"/"+name], &role)
		if diff := cmp.Diff(wantRules, sortedAccesses(accesses(role.Rules))); diff != "" {
			t.Errorf("%s: the controller's Role (-sidecar+monitor +chart):\n%s", ns, diff)
		}
		var ss rbacv1.Role
		typed(t, objs["Role "+ns+"/"+name+"-spark-submit"], &ss)
		if diff := cmp.Diff(sparkSubmit.Rules, ss.Rules); diff != "" {
			t.Errorf("%s: spark-submit Role (-manifests/spark-submit +chart):\n%s", ns, diff)
		}
		var la rbacv1.Role
		typed(t, objs["Role "+ns+"/"+name+"-log-archive"], &la)
		if len(la.Rules) != 1 || !slices.Equal(la.Rules[0].Resources, []string{"secrets"}) || !slices.Equal(la.Rules[0].ResourceNames, []string{"s3-credentials"}) {
			t.Errorf("%s: log archive Role %+v, want get on Secret s3-credentials only", ns, la.Rules)
		}
		for _, rb := range []string{name, name + "-spark-submit", name + "-log-archive"} {
			var b rbacv1.RoleBinding
			typed(t, objs["RoleBinding "+ns+"/"+rb], &b)
			if diff := cmp.Diff(controllerSA, b.Subjects); diff != "" {
				t.Errorf("%s: RoleBinding %s subjects (-want +got):\n%s", ns, rb, diff)
			}
			if b.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: rb}) {
				t.Errorf("%s: RoleBinding %s binds %+v", ns, rb, b.RoleRef)
			}
		}

		c := ackContainer(t, objs, ns)
		const ackImage = "registry.example.com/platform/sparkplug-ack:v0.1.0@sha256:9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d"
		if c.Image != ackImage || c.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("%s: acknowledger %s (%s), want %s (IfNotPresent)", ns, c.Image, c.ImagePullPolicy, ackImage)
		}
		if got := c.Resources.Limits.Memory().String(); got != "24Mi" {
			t.Errorf("%s: acknowledger memory limit %s, want controller.ackResources' 24Mi", ns, got)
		}
	}
	var lease rbacv1.Role
	typed(t, objs["Role "+systemNamespace+"/"+name+"-leader-election"], &lease)
	if diff := cmp.Diff(manifestsRoles(t, controllerRBACFile)[controllerLeaseRole].Rules, lease.Rules); diff != "" {
		t.Errorf("the Lease's Role (-%s +chart):\n%s", controllerRBACFile, diff)
	}

	var d appsv1.Deployment
	typed(t, objs["Deployment "+systemNamespace+"/"+name], &d)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas %s, want controller.replicas 3", fmtPtr(d.Spec.Replicas))
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != name || pod.PriorityClassName != "platform-critical" {
		t.Errorf("serviceAccountName %q, priorityClassName %q (monitor.priorityClassName)", pod.ServiceAccountName, pod.PriorityClassName)
	}
	c := pod.Containers[0]
	if want := "registry.example.com/platform/sparkplug:v0.1.0@sha256:4f1d3c6a2b8e9d0f7a5c3b1e2d4f6a8c0b9e7d5f3a1c2b4d6e8f0a9c7b5d3e1f"; c.Image != want {
		t.Errorf("image %s, want the sidecar's %s", c.Image, want)
	}
	wantArgs := []string{"controller", "--namespaces=team-a,team-b", "--metrics-addr=:9090", "--health-addr=:8081",
		"--leader-elect=true", "--leader-election-id=" + name,
		// monitor.*'s flags.
		"--metrics-labels=team", "--ttl-interval=30s", "--kube-api-qps=100", "--kube-api-burst=200", "--log-level=debug", "--log-format=text",
		// serve.*'s step flags, and not the sidecar's own (metricsAddr,
		// shutdownGrace, logLevel).
		"--workers=32", "--resync=5s", "--write-gap=3s", "--progress-interval=1m", "--interim-hold=5s", "--ttl-leftover-interval=10m",
		"--ingress-url-format={{$appName}}.spark.example.com", "--ingress-class-name=nginx",
		"--launcher=spark-submit", "--spark-home=/opt/spark", "--max-spark-submits=4",
		"--history-server-url=https://spark-history.example.com", "--archive-logs=true",
		"--allowed-service-accounts=spark", "--pod-security-level=restricted", "--allowed-service-types=ClusterIP",
		// controller.extraArgs.
		"--pprof-addr=127.0.0.1:6060"}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if got := c.Resources.Limits.Memory().String(); got != "1Gi" || c.Env[1].Value != "900MiB" {
		t.Errorf("memory limit %s, GOMEMLIMIT %q: want controller.*'s 1Gi and 900MiB", got, c.Env[1].Value)
	}
	var svc corev1.Service
	typed(t, objs["Service "+systemNamespace+"/"+name], &svc)
	checkServiceMonitor(t, objs["ServiceMonitor "+systemNamespace+"/"+name], svc.Labels)
}

// TestChartControllerIsManifestsController: with --set mode=controller
// and the defaults otherwise, the chart installs what
// manifests/modes/controller does (kubectl apply -k): the ack ConfigMap
// generated from plugin-ack.yaml, the same pod spec (but the namespaces
// it serves), Roles, Service and NetworkPolicy.
func TestChartControllerIsManifestsController(t *testing.T) {
	objs := objects(t, render(t, chartDir, "controller-default.values.yaml"))
	const name = "sparkplug-controller"
	base := map[string]runtime.Object{}
	for _, f := range []string{"rbac.yaml", "deployment.yaml", "service.yaml", "networkpolicy.yaml", "poddisruptionbudget.yaml", "spark-executor-plugin-configmap.yaml"} {
		for _, o := range decodeDocs(t, controllerModeDir+"/"+f) {
			base[kindOf(o)+" "+o.(interface{ GetName() string }).GetName()] = o
		}
	}
	var keys, wantKeys []string
	for k := range objs {
		keys = append(keys, k)
	}
	for k := range base {
		kind, n, _ := strings.Cut(k, " ")
		wantKeys = append(wantKeys, kind+" "+releaseNamespace+"/"+n)
	}
	slices.Sort(keys)
	slices.Sort(wantKeys)
	if diff := cmp.Diff(wantKeys, keys); diff != "" {
		t.Errorf("objects (-%s +chart):\n%s", controllerModeDir, diff)
	}

	// The PodDisruptionBudget: the same spec, but the chart's selector
	// also names the release.
	wantPDB := base["PodDisruptionBudget "+name].(*policyv1.PodDisruptionBudget)
	var pdb policyv1.PodDisruptionBudget
	typed(t, objs["PodDisruptionBudget "+releaseNamespace+"/"+name], &pdb)
	wantPDBSpec := wantPDB.Spec.DeepCopy()
	wantPDBSpec.Selector.MatchLabels["app.kubernetes.io/instance"] = releaseName
	if diff := cmp.Diff(*wantPDBSpec, pdb.Spec); diff != "" {
		t.Errorf("PodDisruptionBudget (-%s +chart):\n%s", controllerModeDir, diff)
	}

	wantCM := base["ConfigMap "+serviceAccount].(*corev1.ConfigMap)
	if diff := cmp.Diff(sidecarContainer(t, wantCM), ackContainer(t, objs, releaseNamespace)); diff != "" {
		t.Errorf("the acknowledger (-%s +chart):\n%s", ackConfigMapFile, diff)
	}
	var cm corev1.ConfigMap
	typed(t, objs["ConfigMap "+releaseNamespace+"/"+serviceAccount], &cm)
	if diff := cmp.Diff(wantCM.Annotations, cm.Annotations); diff != "" {
		t.Errorf("plugin annotations (-%s +chart):\n%s", ackConfigMapFile, diff)
	}
	for _, role := range []string{name, controllerLeaseRole} {
		var got rbacv1.Role
		typed(t, objs["Role "+releaseNamespace+"/"+role], &got)
		if diff := cmp.Diff(base["Role "+role].(*rbacv1.Role).Rules, got.Rules); diff != "" {
			t.Errorf("Role %s (-%s +chart):\n%s", role, controllerModeDir, diff)
		}
	}
	var d appsv1.Deployment
	typed(t, objs["Deployment "+releaseNamespace+"/"+name], &d)
	wantD := base["Deployment "+name].(*appsv1.Deployment)
	if *d.Spec.Replicas != *wantD.Spec.Replicas {
		t.Errorf("replicas %d, %s %d", *d.Spec.Replicas, controllerModeDir, *wantD.Spec.Replicas)
	}
	wantSpec := wantD.Spec.Template.Spec.DeepCopy()
	if i := slices.Index(wantSpec.Containers[0].Args, "--namespaces=$(POD_NAMESPACE)"); i < 0 {
		t.Errorf("%s args %q lack --namespaces=$(POD_NAMESPACE)", controllerModeDir, wantSpec.Containers[0].Args)
	} else {
		wantSpec.Containers[0].Args[i] = "--namespaces=" + releaseNamespace
	}
	if diff := cmp.Diff(*wantSpec, d.Spec.Template.Spec); diff != "" {
		t.Errorf("pod spec (-%s +chart):\n%s", controllerModeDir, diff)
	}
	var svc corev1.Service
	typed(t, objs["Service "+releaseNamespace+"/"+name], &svc)
	if diff := cmp.Diff(base["Service "+name].(*corev1.Service).Spec.Ports, svc.Spec.Ports); diff != "" {
		t.Errorf("Service ports (-%s +chart):\n%s", controllerModeDir, diff)
	}
	var np networkingv1.NetworkPolicy
	typed(t, objs["NetworkPolicy "+releaseNamespace+"/"+name], &np)
	if diff := cmp.Diff(base["NetworkPolicy "+name].(*networkingv1.NetworkPolicy).Spec.Ingress, np.Spec.Ingress); diff != "" {
		t.Errorf("NetworkPolicy (-%s +chart):\n%s", controllerModeDir, diff)
	}
	if !cmp.Equal(np.Spec.PodSelector.MatchLabels, d.Spec.Selector.MatchLabels) {
		t.Errorf("NetworkPolicy selects %v, the pods are %v", np.Spec.PodSelector.MatchLabels, d.Spec.Selector.MatchLabels)
	}
}

// TestChartModes: the mode value is checked (the schema's enum), the
// monitor is refused beside the controller, and the sidecar mode is what
// it was: without mode, and with mode sidecar, the same objects.
func TestChartModes(t *testing.T) {
	_, err := helm(t, "template", releaseName, chartDir, "--set", "mode=controler")
	if err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("mode=controler: %v, want a refusal naming mode", err)
	}
	_, err = helm(t, "template", releaseName, chartDir, "--set", "mode=controller,monitor.enabled=true")
	if err == nil || !strings.Contains(err.Error(), "monitor.enabled=false") {
		t.Errorf("the controller and the monitor: %v, want a refusal naming monitor.enabled", err)
	}
	if diff := cmp.Diff(objects(t, helmTemplate(t)), objects(t, helmTemplate(t, "--set", "mode=sidecar"))); diff != "" {
		t.Errorf("mode=sidecar differs from the default (-default +sidecar):\n%s", diff)
	}
	// A release of another name: the controller's objects, Lease and
	// ack image follow; no plugin ServiceAccount in either job namespace.
	out, err := helm(t, "template", "spark", chartDir, "--namespace", "argo",
		"--set", "mode=controller,jobNamespaces={team-a,team-b},ackImage.tag=v9.9.9")
	if err != nil {
		t.Fatal(err)
	}
	objs := objects(t, out)
	if _, ok := objs["Deployment argo/spark-controller"]; !ok {
		t.Errorf("no Deployment argo/spark-controller in %q", sortedKeys(objs))
	}
	var d appsv1.Deployment
	typed(t, objs["Deployment argo/spark-controller"], &d)
	if !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--leader-election-id=spark-controller") {
		t.Errorf("args %q, want the Lease spark-controller", d.Spec.Template.Spec.Containers[0].Args)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		if c := ackContainer(t, objs, ns); c.Image != "ghcr.io/sparkplug-io/sparkplug-ack:v9.9.9" {
			t.Errorf("%s: acknowledger %s", ns, c.Image)
		}
		for _, k := range []string{"ServiceAccount", "Secret", "Role", "RoleBinding"} {
			if _, ok := objs[k+" "+ns+"/"+serviceAccount]; ok {
				t.Errorf("%s %s/%s in controller mode", k, ns, serviceAccount)
			}
		}
		var rb rbacv1.RoleBinding
		typed(t, objs["RoleBinding "+ns+"/spark-controller"], &rb)
		if !slices.Equal(rb.Subjects, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "spark-controller", Namespace: "argo"}}) {
			t.Errorf("%s: RoleBinding subjects %+v", ns, rb.Subjects)
		}
	}
}
