package main

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The chart's own values.yaml, pinned: the image keys change, every other
// value and the comments stay.
func TestPinTheChartsValues(t *testing.T) {
	in, err := os.ReadFile("../../../manifests/chart/sparkplug/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	digest := "sha256:" + strings.Repeat("ab", 32)
	out, err := pin(in, "image", map[string]string{"repository": "example.com/sp", "tag": "v1.2.3", "digest": digest})
	if err != nil {
		t.Fatal(err)
	}
	ackDigest := "sha256:" + strings.Repeat("cd", 32)
	out, err = pin(out, "ackImage", map[string]string{"repository": "example.com/sp-ack", "tag": "v1.2.3", "digest": ackDigest})
	if err != nil {
		t.Fatal(err)
	}
	var before, after map[string]any
	if err := yaml.Unmarshal(in, &before); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(out, &after); err != nil {
		t.Fatal(err)
	}
	img := after["image"].(map[string]any)
	if img["repository"] != "example.com/sp" || img["tag"] != "v1.2.3" || img["digest"] != digest {
		t.Errorf("image %v", img)
	}
	ack := after["ackImage"].(map[string]any)
	if ack["repository"] != "example.com/sp-ack" || ack["tag"] != "v1.2.3" || ack["digest"] != ackDigest {
		t.Errorf("ackImage %v", ack)
	}
	before["image"], after["image"] = nil, nil
	before["ackImage"], after["ackImage"] = nil, nil
	b1, _ := yaml.Marshal(before)
	b2, _ := yaml.Marshal(after)
	if string(b1) != string(b2) {
		t.Errorf("values other than image changed:\n%s\n---\n%s", b1, b2)
	}
	if !strings.Contains(string(out), "# The sidecar's image") {
		t.Error("comments lost")
	}
}

func TestRunRejectsABadDigest(t *testing.T) {
	if err := run([]string{"-chart", t.TempDir(), "-repository", "r", "-tag", "v1", "-digest", "sha256:12"}, os.Stderr); err == nil {
		t.Error("a short digest was accepted")
	}
	good := "sha256:" + strings.Repeat("ab", 32)
	if err := run([]string{"-chart", t.TempDir(), "-repository", "r", "-tag", "v1", "-digest", good, "-ack-digest", good}, os.Stderr); err == nil {
		t.Error("an -ack-digest without -ack-repository was accepted")
	}
}

// The chart's own Chart.yaml, annotated: the Artifact Hub images name the
// pinned images, prerelease follows the tag, the rest stays.
func TestAnnotateTheChartsImages(t *testing.T) {
	in, err := os.ReadFile("../../../manifests/chart/sparkplug/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]string{
		"sparkplug":     "example.com/sp:v1.2.3-rc.1@sha256:" + strings.Repeat("ab", 32),
		"sparkplug-ack": "example.com/sp-ack:v1.2.3-rc.1@sha256:" + strings.Repeat("cd", 32),
	}
	out, err := annotate(in, images, true)
	if err != nil {
		t.Fatal(err)
	}
	var before, after struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(in, &before); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(out, &after); err != nil {
		t.Fatal(err)
	}
	var list []map[string]string
	if err := yaml.Unmarshal([]byte(after.Annotations["artifacthub.io/images"]), &list); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range list {
		got[e["name"]] = e["image"]
	}
	if len(got) != 2 || got["sparkplug"] != images["sparkplug"] || got["sparkplug-ack"] != images["sparkplug-ack"] {
		t.Errorf("artifacthub.io/images %v, want %v", got, images)
	}
	if p := after.Annotations["artifacthub.io/prerelease"]; p != "true" {
		t.Errorf("artifacthub.io/prerelease %q, want true", p)
	}
	for k, v := range before.Annotations {
		if k != "artifacthub.io/images" && k != "artifacthub.io/prerelease" && after.Annotations[k] != v {
			t.Errorf("annotation %s changed: %q", k, after.Annotations[k])
		}
	}
	if !strings.Contains(string(out), "# Artifact Hub") || !strings.Contains(string(out), "\nappVersion: v0.1.0\n") {
		t.Error("comments or other fields lost")
	}
	if _, err := annotate(in, map[string]string{"other": "x"}, false); err == nil {
		t.Error("an image the annotation does not name was accepted")
	}
}
