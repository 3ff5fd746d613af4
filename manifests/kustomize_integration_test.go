//go:build integration

package manifests

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// extractContainer is the command manifests/README.md gives to write the
// sidecar container of the generated ConfigMap as a plain YAML file (there
// from an overlay's directory next to manifests/, here from the
// repository's root).
const extractContainer = `sed -n '/^  sidecar.container: |$/,/^kind: /p' manifests/spark-executor-plugin-configmap.yaml | sed '1d;$d;s/^    //'`

// TestKustomizeOverlayReplacesTheSidecar follows manifests/README.md's recipe
// for a sidecar of one's own with plain kustomize: the container extracted
// as a file, its image and args edited, and an overlay whose
// configMapGenerator (behavior: merge) replaces the ConfigMap's
// sidecar.container key with it. Built with the pinned kubectl and applied
// to the API server, the ConfigMap keeps Argo's name, label and
// annotations and holds the edited container; everything else is the
// base's.
func TestKustomizeOverlayReplacesTheSidecar(t *testing.T) {
	const ns = "custom-sidecar"
	cmd := exec.CommandContext(t.Context(), "bash", "-c", extractContainer)
	cmd.Dir = ".."
	extracted, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", extractContainer, err)
	}
	var base corev1.ConfigMap
	decodeFile(t, configMapFile, &base)
	var c corev1.Container
	if err := yaml.UnmarshalStrict(extracted, &c); err != nil {
		t.Fatalf("the extracted container: %v\n%s", err, extracted)
	}
	if string(extracted) != base.Data["sidecar.container"] {
		t.Fatalf("the extracted container is not the ConfigMap's sidecar.container:\n%s", extracted)
	}

	// The user's edits.
	c.Image = "registry.example.com/platform/sparkplug@sha256:4f1d3c6a2b8e9d0f7a5c3b1e2d4f6a8c0b9e7d5f3a1c2b4d6e8f0a9c7b5d3e1f"
	c.ImagePullPolicy = corev1.PullIfNotPresent
	c.Args = append(c.Args, "--ingress-url-format={{$appName}}.spark.example.com", "--log-format=text")
	edited, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	const generator = `
configMapGenerator:
  - name: spark-executor-plugin
    behavior: merge
    files:
      - sidecar.container=sidecar-container.yaml
    options:
      disableNameSuffixHash: true
`
	custom := overlay(t, "namespace: "+ns+"\nresources: [MANIFESTS]\n"+generator,
		map[string]string{"sidecar-container.yaml": string(edited)})
	plain := overlay(t, "namespace: "+ns+"\nresources: [MANIFESTS]\n", map[string]string{})
	rendered := kubectl(t, custom, "kustomize", ".")

	got, want := objectsByName(t, rendered), objectsByName(t, kubectl(t, plain, "kustomize", "."))
	if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
		t.Fatalf("objects %q, want the base's %q", sortedKeys(got), sortedKeys(want))
	}
	for name, w := range want {
		if name == "ConfigMap/"+serviceAccount {
			continue
		}
		if diff := cmp.Diff(w, got[name]); diff != "" {
			t.Errorf("%s differs from the base's (-base +overlay):\n%s", name, diff)
		}
	}
	cm := got["ConfigMap/"+serviceAccount].(*corev1.ConfigMap)
	wantCM := want["ConfigMap/"+serviceAccount].(*corev1.ConfigMap)
	if diff := cmp.Diff(wantCM.ObjectMeta, cm.ObjectMeta); diff != "" {
		t.Errorf("ConfigMap metadata (-base +overlay):\n%s", diff)
	}
	if k := "sidecar.automountServiceAccountToken"; cm.Data[k] != wantCM.Data[k] || len(cm.Data) != len(wantCM.Data) {
		t.Errorf("data %q, want the base's keys and %s %q", sortedKeys(cm.Data), k, wantCM.Data[k])
	}
	checkSidecar := func(where string, cm *corev1.ConfigMap) {
		var gotC corev1.Container
		if err := yaml.UnmarshalStrict([]byte(cm.Data["sidecar.container"]), &gotC); err != nil {
			t.Fatalf("%s: sidecar.container: %v", where, err)
		}
		if diff := cmp.Diff(c, gotC); diff != "" {
			t.Errorf("%s: sidecar (-edited +got):\n%s", where, diff)
		}
	}
	checkSidecar("kubectl kustomize", cm)

	createNamespace(t, ns)
	if err := testCluster.Apply(t.Context(), rendered); err != nil {
		t.Fatalf("apply the overlay: %v", err)
	}
	applied, err := testCluster.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), serviceAccount, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if applied.Labels[labelKeyConfigMapType] != "ExecutorPlugin" {
		t.Errorf("applied ConfigMap labels %v", applied.Labels)
	}
	checkSidecar("the applied ConfigMap", applied)
}

// objectsByName decodes kubectl kustomize output by "Kind/name".
func objectsByName(t *testing.T, docs []byte) map[string]runtime.Object {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rendered.yaml")
	if err := os.WriteFile(path, docs, 0o644); err != nil {
		t.Fatal(err)
	}
	m := map[string]runtime.Object{}
	for _, o := range decodeDocs(t, path) {
		m[kindOf(o)+"/"+o.(metav1.Object).GetName()] = o
	}
	return m
}
