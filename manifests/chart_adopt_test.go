//go:build chart

package manifests

import (
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// TestChartRefusesArgoNamespace: the plugin ConfigMap never lands in the
// namespace of Argo's workflow-controller (argo.namespace), from which
// Argo gives it to the agent pods of every namespace, unless
// argo.allowControllerNamespace says so; in both modes, and whether the
// namespace comes from jobNamespaces or from the release's (-n).
func TestChartRefusesArgoNamespace(t *testing.T) {
	for _, mode := range []string{"sidecar", "controller"} {
		for _, tc := range []struct {
			name, namespace string
			sets            []string
			// refused: the message names this; else the ConfigMaps'
			// namespaces.
			refused      string
			configMapsIn []string
		}{
			{name: "release namespace argo", namespace: "argo",
				refused: "jobNamespaces is empty, so the release's namespace"},
			{name: "jobNamespaces lists argo", namespace: "team-a", sets: []string{"jobNamespaces={team-a,argo}"},
				refused: "jobNamespaces lists it"},
			{name: "Argo elsewhere, named", namespace: "workflows", sets: []string{"argo.namespace=workflows"},
				refused: `namespace "workflows"`},
			{name: "installed in argo for job namespaces", namespace: "argo", sets: []string{"jobNamespaces={team-a,team-b}"},
				configMapsIn: []string{"team-a", "team-b"}},
			{name: "Argo elsewhere", namespace: "argo", sets: []string{"argo.namespace=workflows"},
				configMapsIn: []string{"argo"}},
			{name: "allowed", namespace: "argo", sets: []string{"argo.allowControllerNamespace=true"},
				configMapsIn: []string{"argo"}},
		} {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				args := []string{"template", releaseName, chartDir, "--namespace", tc.namespace, "--set", "mode=" + mode}
				for _, s := range tc.sets {
					args = append(args, "--set", s)
				}
				out, err := helm(t, args...)
				if tc.refused != "" {
					if err == nil {
						t.Fatal("helm template succeeded")
					}
					// Why, and how to allow it.
					for _, says := range []string{tc.refused, "Argo's workflow-controller", "EVERY namespace",
						"jobNamespaces={", "argo.allowControllerNamespace=true"} {
						if !strings.Contains(err.Error(), says) {
							t.Errorf("the error does not say %q: %v", says, err)
						}
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				var in []string
				for _, o := range objects(t, out) {
					if o.GetKind() == "ConfigMap" && o.GetName() == "spark-executor-plugin" {
						in = append(in, o.GetNamespace())
					}
				}
				slices.Sort(in)
				if !slices.Equal(in, tc.configMapsIn) {
					t.Errorf("plugin ConfigMaps in %q, want %q", in, tc.configMapsIn)
				}
			})
		}
	}
}

// TestChartImagePullSecrets: imagePullSecrets reach the pods of the
// monitor's and the controller's Deployments; the plugin's container has
// no place for them (Argo's executor plugin spec is a container), so the
// ConfigMap stays as it was.
func TestChartImagePullSecrets(t *testing.T) {
	for _, mode := range []string{"monitor.enabled=true", "mode=controller"} {
		t.Run(mode, func(t *testing.T) {
			objs := objects(t, helmTemplate(t, "--set", mode, "--set", "imagePullSecrets[0].name=regcred",
				"--set", "imagePullSecrets[1].name=mirror"))
			var deployments []appsv1.Deployment
			for _, o := range objs {
				if o.GetKind() == "Deployment" {
					var d appsv1.Deployment
					typed(t, o, &d)
					deployments = append(deployments, d)
				}
			}
			if len(deployments) != 1 {
				t.Fatalf("%d Deployments, want 1", len(deployments))
			}
			want := []corev1.LocalObjectReference{{Name: "regcred"}, {Name: "mirror"}}
			if got := deployments[0].Spec.Template.Spec.ImagePullSecrets; !slices.Equal(got, want) {
				t.Errorf("%s: imagePullSecrets %v, want %v", deployments[0].Name, got, want)
			}
			var cm corev1.ConfigMap
			typed(t, objs["ConfigMap team-a/spark-executor-plugin"], &cm)
			var c map[string]any
			if err := yaml.Unmarshal([]byte(cm.Data["sidecar.container"]), &c); err != nil {
				t.Fatal(err)
			}
			if _, ok := c["imagePullSecrets"]; ok {
				t.Errorf("the plugin container carries imagePullSecrets, which Argo's spec has not: %v", c)
			}
		})
	}
	objs := objects(t, helmTemplate(t, "--set", "monitor.enabled=true"))
	var d appsv1.Deployment
	typed(t, objs["Deployment team-a/sparkplug-monitor"], &d)
	if got := d.Spec.Template.Spec.ImagePullSecrets; got != nil {
		t.Errorf("imagePullSecrets %v without any set", got)
	}
}

// TestChartPodDisruptionBudget: a PodDisruptionBudget keeps the standby
// of the monitor (the controller) through a drain: on by default when
// there is more than one replica, selecting exactly the Deployment's pods.
func TestChartPodDisruptionBudget(t *testing.T) {
	for _, tc := range []struct {
		name           string
		sets           []string
		maxUnavailable *intstr.IntOrString
	}{
		{name: "monitor, one replica", sets: []string{"monitor.enabled=true"}},
		{name: "monitor, two replicas", sets: []string{"monitor.enabled=true", "monitor.replicas=2"},
			maxUnavailable: ptrTo(intstr.FromInt32(1))},
		{name: "monitor, two replicas, off", sets: []string{"monitor.enabled=true", "monitor.replicas=2", "monitor.podDisruptionBudget.enabled=false"}},
		{name: "monitor, one replica, on", sets: []string{"monitor.enabled=true", "monitor.podDisruptionBudget.enabled=true"},
			maxUnavailable: ptrTo(intstr.FromInt32(1))},
		{name: "controller, default two replicas", sets: []string{"mode=controller"},
			maxUnavailable: ptrTo(intstr.FromInt32(1))},
		{name: "controller, percentage", sets: []string{"mode=controller", "controller.replicas=4", "monitor.podDisruptionBudget.maxUnavailable=50%"},
			maxUnavailable: ptrTo(intstr.FromString("50%"))},
		{name: "controller, one replica", sets: []string{"mode=controller", "controller.replicas=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			for _, s := range tc.sets {
				args = append(args, "--set", s)
			}
			objs := objects(t, helmTemplate(t, args...))
			var pdbs []policyv1.PodDisruptionBudget
			var deployment appsv1.Deployment
			for _, o := range objs {
				switch o.GetKind() {
				case "PodDisruptionBudget":
					var p policyv1.PodDisruptionBudget
					typed(t, o, &p)
					pdbs = append(pdbs, p)
				case "Deployment":
					typed(t, o, &deployment)
				}
			}
			if tc.maxUnavailable == nil {
				if len(pdbs) != 0 {
					t.Fatalf("PodDisruptionBudgets %v, want none", pdbs)
				}
				return
			}
			if len(pdbs) != 1 {
				t.Fatalf("%d PodDisruptionBudgets, want 1", len(pdbs))
			}
			p := pdbs[0]
			if p.Name != deployment.Name || p.Namespace != deployment.Namespace {
				t.Errorf("PodDisruptionBudget %s/%s, want the Deployment's name %s/%s", p.Namespace, p.Name, deployment.Namespace, deployment.Name)
			}
			if p.Spec.MaxUnavailable == nil || *p.Spec.MaxUnavailable != *tc.maxUnavailable || p.Spec.MinAvailable != nil {
				t.Errorf("maxUnavailable %v, minAvailable %v; want maxUnavailable %v", p.Spec.MaxUnavailable, p.Spec.MinAvailable, tc.maxUnavailable)
			}
			if p.Spec.Selector == nil || !maps.Equal(p.Spec.Selector.MatchLabels, deployment.Spec.Selector.MatchLabels) {
				t.Errorf("selector %v, want the Deployment's %v", p.Spec.Selector, deployment.Spec.Selector)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
