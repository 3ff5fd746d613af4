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
