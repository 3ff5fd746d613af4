//go:build chart

package manifests

import (
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestChartArtifactHubAnnotations: Chart.yaml carries the Artifact Hub
// annotations (each of the YAML its documentation asks for), and
// artifacthub.io/images names exactly the images the chart deploys with its
// default values: the sidecar's (and the monitor's and controller's) and
// the acknowledger's in controller mode.
func TestChartArtifactHubAnnotations(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(b, &chart); err != nil {
		t.Fatal(err)
	}
	ann := chart.Annotations
	for _, k := range []string{"artifacthub.io/containsSecurityUpdates", "artifacthub.io/prerelease"} {
		if v := ann[k]; v != "true" && v != "false" {
			t.Errorf("%s %q, want \"true\" or \"false\"", k, v)
		}
	}
	if v := ann["artifacthub.io/license"]; v != "Apache-2.0" {
		t.Errorf("artifacthub.io/license %q, want Apache-2.0, the project's LICENSE", v)
	}
	lists := map[string][]string{
		"artifacthub.io/images":  {"name", "image"},
		"artifacthub.io/links":   {"name", "url"},
		"artifacthub.io/changes": {"kind", "description"},
	}
	entries := map[string][]map[string]string{}
	for k, fields := range lists {
		var list []map[string]string
		if err := yaml.UnmarshalStrict([]byte(ann[k]), &list); err != nil || len(list) == 0 {
			t.Errorf("%s %q: %v, want a list", k, ann[k], err)
		}
		for _, e := range list {
			for _, f := range fields {
				if e[f] == "" {
					t.Errorf("%s: an entry without %s: %v", k, f, e)
				}
			}
		}
		entries[k] = list
	}
	images := map[string]string{}
	for _, e := range entries["artifacthub.io/images"] {
		images[e["name"]] = e["image"]
	}
	if len(images) != 2 {
		t.Errorf("artifacthub.io/images %v, want sparkplug and sparkplug-ack", images)
	}

	sidecar := sidecarContainer(t, byKind(decodeObjects(t, render(t, chartDir, "")))["ConfigMap"][0].(*corev1.ConfigMap))
	if sidecar.Image != images["sparkplug"] {
		t.Errorf("the chart's sidecar runs %q, artifacthub.io/images names %q", sidecar.Image, images["sparkplug"])
	}
	rendered, err := helm(t, "template", releaseName, chartDir, "--namespace", releaseNamespace, "--set", "monitor.enabled=true")
	if err != nil {
		t.Fatalf("helm template with the monitor: %v", err)
	}
	monitor := byKind(decodeObjects(t, rendered))["Deployment"]
	if len(monitor) != 1 {
		t.Fatalf("%d Deployments with the monitor, want 1", len(monitor))
	}
	controller := byKind(decodeObjects(t, render(t, chartDir, "controller-default.values.yaml")))
	for _, d := range append(monitor, controller["Deployment"]...) {
		d := d.(*appsv1.Deployment)
		if got := d.Spec.Template.Spec.Containers[0].Image; got != images["sparkplug"] {
			t.Errorf("Deployment %s runs %q, artifacthub.io/images names %q", d.Name, got, images["sparkplug"])
		}
	}
	ack := sidecarContainer(t, controller["ConfigMap"][0].(*corev1.ConfigMap))
	if ack.Image != images["sparkplug-ack"] {
		t.Errorf("the chart's acknowledger is %q, artifacthub.io/images names %q", ack.Image, images["sparkplug-ack"])
	}
}
