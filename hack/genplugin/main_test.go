package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/argoproj/argo-workflows/v3/pkg/plugins/spec"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const (
	pluginFile    = "../../plugin.yaml"
	configMapFile = "../../manifests/spark-executor-plugin-configmap.yaml"
	// Controller mode's: the acknowledger's manifest and ConfigMap.
	ackPluginFile    = "../../plugin-ack.yaml"
	ackConfigMapFile = "../../manifests/modes/controller/spark-executor-plugin-configmap.yaml"
)

// TestCheckedInConfigMapIsFresh is what `make verify` checks with diff,
// for each mode's manifest.
func TestCheckedInConfigMapIsFresh(t *testing.T) {
	for in, out := range map[string]string{pluginFile: configMapFile, ackPluginFile: ackConfigMapFile} {
		manifest, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := generate(manifest, filepath.Base(in), "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s is stale: run make plugin (-want +got):\n%s", out, diff)
		}
	}
}

// TestToConfigMapAsArgo runs the cases of Argo's own TestToConfigMap
// (workflow/util/plugins/configmap_test.go) against the copy.
func TestToConfigMapAsArgo(t *testing.T) {
	t.Run("Invalid", func(t *testing.T) {
		_, err := toConfigMap(&spec.Plugin{})
		if err == nil || err.Error() != "sidecar is invalid: at least one port is mandatory" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("Valid", func(t *testing.T) {
		cm, err := toConfigMap(&spec.Plugin{
			TypeMeta: metav1.TypeMeta{Kind: "ExecutorPlugin"},
			ObjectMeta: metav1.ObjectMeta{
				Name:        "my-plug",
				Annotations: map[string]string{"my-anno": "my-value"},
				Labels:      map[string]string{"my-label": "my-value"},
			},
			Spec: spec.PluginSpec{Sidecar: spec.Sidecar{
				AutomountServiceAccountToken: true,
				Container: corev1.Container{
					Ports: []corev1.ContainerPort{{ContainerPort: 1234}},
					Resources: corev1.ResourceRequirements{
						Limits:   map[corev1.ResourceName]resource.Quantity{},
						Requests: map[corev1.ResourceName]resource.Quantity{},
					},
					SecurityContext: &corev1.SecurityContext{},
				},
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Name != "my-plug-executor-plugin" {
			t.Errorf("name = %q", cm.Name)
		}
		if diff := cmp.Diff(map[string]string{"my-anno": "my-value"}, cm.Annotations); diff != "" {
			t.Errorf("annotations (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{
			"my-label":                             "my-value",
			"workflows.argoproj.io/configmap-type": "ExecutorPlugin",
		}, cm.Labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{
			"sidecar.automountServiceAccountToken": "true",
			"sidecar.container":                    "name: \"\"\nports:\n- containerPort: 1234\nresources: {}\nsecurityContext: {}\n",
		}, cm.Data); diff != "" {
			t.Errorf("data (-want +got):\n%s", diff)
		}
	})
}

func TestGenerateRejects(t *testing.T) {
	for _, tc := range []struct {
		name, manifest, wantErr string
	}{
		{"unknown field", "apiVersion: argoproj.io/v1alpha1\nkind: ExecutorPlugin\nmetadata: {name: x}\nspec: {sidecar: {contaner: {}}}\n", `unknown field "contaner"`},
		{"no port", "apiVersion: argoproj.io/v1alpha1\nkind: ExecutorPlugin\nmetadata: {name: x}\nspec: {sidecar: {container: {name: x}}}\n", "at least one port is mandatory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := generate([]byte(tc.manifest), "plugin.yaml", "")
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestRunWritesTheFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cm.yaml")
	if err := run([]string{"-in", pluginFile, "-out", out}, io.Discard); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(header, "plugin.yaml") + "\napiVersion: v1\n"; !strings.HasPrefix(string(got), want) {
		t.Errorf("%s starts %q", out, got[:min(len(got), 80)])
	}
	if err := run([]string{"-in", pluginFile, "stray"}, io.Discard); err == nil {
		t.Error("a stray argument was accepted")
	}
}

// -image pins the sidecar's image and changes nothing else.
func TestImageReplacesTheSidecarsImage(t *testing.T) {
	manifest, err := os.ReadFile(pluginFile)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := generate(manifest, "plugin.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	const pinned = "ghcr.io/sparkplug-io/sparkplug:v1.2.3@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	got, err := generate(manifest, "plugin.yaml", pinned)
	if err != nil {
		t.Fatal(err)
	}
	var a, b corev1.ConfigMap
	if err := yaml.Unmarshal(plain, &a); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(got, &b); err != nil {
		t.Fatal(err)
	}
	var ca, cb corev1.Container
	if err := yaml.Unmarshal([]byte(a.Data["sidecar.container"]), &ca); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(b.Data["sidecar.container"]), &cb); err != nil {
		t.Fatal(err)
	}
	if cb.Image != pinned {
		t.Errorf("image %q, want %q", cb.Image, pinned)
	}
	cb.Image = ca.Image
	if !reflect.DeepEqual(ca, cb) || !reflect.DeepEqual(a.Labels, b.Labels) || a.Data["sidecar.automountServiceAccountToken"] != b.Data["sidecar.automountServiceAccountToken"] {
		t.Error("-image changed more than the image")
	}
}
