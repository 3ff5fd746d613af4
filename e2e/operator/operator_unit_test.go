package operator

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// moduleDir is the operator module pinned in hack/operator, downloaded if
// need be (go list -m names no dir for a module not yet downloaded).
func moduleDir(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", Module)
	cmd.Dir = filepath.Join("..", "..", "hack", "operator")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s in hack/operator: %v", Module, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download -json %s: no dir (%v) in %s", Module, err, out)
	}
	return m.Dir
}

func TestSparkApplicationCRDIsThePinnedOne(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(moduleDir(t), "config", "crd", "bases", "sparkoperator.k8s.io_sparkapplications.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sparkApplicationsCRD, want) {
		t.Error("e2e/operator/sparkapplications-crd.yaml differs from the pinned operator module's SparkApplication CRD: copy it again")
	}
}

// The open CRDs name the kinds as the module's CRDs do, at their storage
// version, so the operator's informers find them.
func TestOtherKindsAreTheModulesOnes(t *testing.T) {
	dir := moduleDir(t)
	for _, k := range otherKinds {
		raw, err := os.ReadFile(filepath.Join(dir, "config", "crd", "bases", Group+"_"+k.plural+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Metadata struct{ Annotations map[string]string }
			Spec     struct {
				Group string
				Scope string
				Names struct{ Kind, Plural string }
				// Only the fields compared: the schema is megabytes.
				Versions []struct {
					Name    string
					Storage bool
				}
			}
		}
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatalf("%s: %v", k.plural, err)
		}
		var storage string
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				storage = v.Name
			}
		}
		got := otherKind{kind: crd.Spec.Names.Kind, plural: crd.Spec.Names.Plural, version: storage}
		if got != k || crd.Spec.Group != Group || crd.Spec.Scope != "Namespaced" {
			t.Errorf("module's CRD %+v (group %s, scope %s), open CRD %+v", got, crd.Spec.Group, crd.Spec.Scope, k)
		}
		if a := crd.Metadata.Annotations[apiApproved]; a != apiApprovedBy {
			t.Errorf("module's CRD of %s approved by %q, open CRD by %q", k.kind, a, apiApprovedBy)
		}
	}
}

// SparkApplication's spec is examples/spark-pi.yaml's spark body, but for
// the executor count and the driver's annotations.
func TestSparkApplicationIsTheExample(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "examples", "spark-pi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Spec struct {
			Templates []struct {
				Plugin struct {
					Spark map[string]any `json:"spark"`
				} `json:"plugin"`
			} `json:"templates"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		t.Fatal(err)
	}
	if len(wf.Spec.Templates) != 1 || wf.Spec.Templates[0].Plugin.Spark == nil {
		t.Fatalf("examples/spark-pi.yaml: want one spark template, got %+v", wf.Spec.Templates)
	}
	want := wf.Spec.Templates[0].Plugin.Spark
	want["executor"].(map[string]any)["instances"] = float64(Executors)

	annotations := map[string]string{"sim.sparkplug.test/exit-code": "0"}
	app := SparkApplication("pi", "ns", annotations)
	got := roundTrip(t, app.Object["spec"]).(map[string]any)
	gotAnnotations := got["driver"].(map[string]any)["annotations"]
	delete(got["driver"].(map[string]any), "annotations")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spec\n%v\nwant examples/spark-pi.yaml's body with %d executor\n%v", got, Executors, want)
	}
	if !reflect.DeepEqual(gotAnnotations, map[string]any{"sim.sparkplug.test/exit-code": "0"}) {
		t.Errorf("driver annotations %v, want %v", gotAnnotations, annotations)
	}
	if app.GetName() != "pi" || app.GetNamespace() != "ns" || app.GroupVersionKind() != SparkApplicationResource.GroupVersion().WithKind("SparkApplication") {
		t.Errorf("object %s %s/%s", app.GroupVersionKind(), app.GetNamespace(), app.GetName())
	}
	if _, ok := SparkApplication("pi", "ns", nil).Object["spec"].(map[string]any)["driver"].(map[string]any)["annotations"]; ok {
		t.Error("no annotations given, yet the driver has some")
	}
}

// roundTrip returns v as JSON decodes it (numbers as float64).
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Start waits for the line controller-runtime logs when the
// SparkApplication controller's workers start, in zap's JSON.
func TestWorkersStarted(t *testing.T) {
	for _, c := range []struct {
		name string
		log  string
		want bool
	}{
		{"started", "Git Version: v2.5.2\n" +
			`{"level":"INFO","ts":"2026-11-25T12:00:00.000Z","caller":"controller/controller.go:248","msg":"Starting workers","controller":"sparkconnect","worker count":10}` + "\n" +
			`{"level":"INFO","ts":"2026-11-25T12:00:00.001Z","caller":"controller/controller.go:248","msg":"Starting workers","controller":"sparkapplication","worker count":10}` + "\n", true},
		{"another controller's workers", `{"level":"INFO","msg":"Starting workers","controller":"scheduledsparkapplication","worker count":10}`, false},
		{"sources only", `{"level":"INFO","msg":"Starting EventSource","controller":"sparkapplication","source":"kind source: *v1.Pod"}`, false},
		{"empty", "", false},
	} {
		if got := workersStarted(c.log); got != c.want {
			t.Errorf("%s: workersStarted = %v, want %v", c.name, got, c.want)
		}
	}
}

// Only the operator's submission dirs go; whatever else is there stays.
func TestRemoveTemplateFiles(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, isDir bool) string {
		p := filepath.Join(dir, name)
		if isDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, "driver-pod-template.yaml"), []byte("spec: {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := mk("3b47ebdb-e332-4026-bde3-4fa29fa2dee1", true)
	kept := []string{mk("not-a-submission", true), mk("0b47ebdb-e332-4026-bde3-4fa29fa2dee2", false)}
	if err := removeTemplateFiles(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("submission dir not removed (stat: %v)", err)
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
	if err := removeTemplateFiles(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("no dir: %v", err)
	}
}
