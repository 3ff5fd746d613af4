package stages

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The Stages and the Go constants name the same annotations.
func TestAnnotationsMatchStages(t *testing.T) {
	used := map[string]bool{}
	keyRE := regexp.MustCompile(regexp.QuoteMeta(Domain) + `/[a-z0-9-]+`)
	names, err := fs.Glob(FS, "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		b, err := FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keyRE.FindAllString(string(b), -1) {
			used[k] = true
			if !slices.Contains(Annotations, k) {
				t.Errorf("%s reads %s, which is not one of the Annotations", name, k)
			}
		}
	}
	for _, k := range Annotations {
		if !used[k] {
			t.Errorf("annotation %s is read by no stage", k)
		}
	}
}

// Every file is one KWOK Stage of pods or nodes with a name matching its
// file.
func TestStagesAreStages(t *testing.T) {
	names, _ := fs.Glob(FS, "*.yaml")
	if len(names) == 0 {
		t.Fatal("no stages embedded")
	}
	for _, name := range names {
		b, _ := FS.ReadFile(name)
		var s struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				ResourceRef struct {
					Kind string `json:"kind"`
				} `json:"resourceRef"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &s); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if ref := s.Spec.ResourceRef.Kind; s.APIVersion != "kwok.x-k8s.io/v1alpha1" || s.Kind != "Stage" || (ref != "Pod" && ref != "Node") {
			t.Errorf("%s: %s %s of %s, want a kwok.x-k8s.io/v1alpha1 Stage of Pod or Node", name, s.APIVersion, s.Kind, ref)
		}
		if s.Metadata.Name+".yaml" != name {
			t.Errorf("%s: stage named %q", name, s.Metadata.Name)
		}
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	paths, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := fs.Glob(FS, "*.yaml")
	if len(paths) != len(names) {
		t.Fatalf("wrote %d files, want %d", len(paths), len(names))
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, dir) {
			t.Errorf("%s not in %s", p, dir)
		}
	}
}
