//go:build e2e

package kueue

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// app is one Spark step of a test's workflow.
type app struct {
	// name is the template's name, and in a workflow of several steps the
	// DAG task's (the node's display name).
	name string
	// labels are the template's own metadata.labels (the queue).
	labels map[string]string
	// driver is how the simulated driver behaves.
	driver sim.Driver
	// example is the file under examples/ whose spark body the step runs:
	// "spark-pi.yaml" unless set.
	example string
	// edit changes the spark body last.
	edit func(body map[string]any)
	// timeout is the template's own timeout ("30s"; "": none).
	timeout string
}

// exampleBody is the spark body of the first template of examples/<file>.
func exampleBody(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.RepoRoot, "examples", file))
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
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("examples/%s: %v", file, err)
	}
	if len(wf.Spec.Templates) == 0 || wf.Spec.Templates[0].Plugin.Spark == nil {
		t.Fatalf("examples/%s: no spark template first", file)
	}
	return wf.Spec.Templates[0].Plugin.Spark
}

// workflow is a Workflow (YAML) that runs apps: one step as the
// entrypoint, several as tasks of a DAG that start together.
func workflow(t *testing.T, generateName string, apps ...app) string {
	t.Helper()
	return build(t, generateName, len(apps) > 1, apps)
}

// dagWorkflow is workflow with even one app as a task of a DAG, as most
// workflows run a step: Argo treats the entry template's own failures
// apart (a timeout there errors the whole workflow).
func dagWorkflow(t *testing.T, generateName string, apps ...app) string {
	t.Helper()
	return build(t, generateName, true, apps)
}

func build(t *testing.T, generateName string, dag bool, apps []app) string {
	t.Helper()
	var templates []any
	var tasks []any
	for _, a := range apps {
		example := a.example
		if example == "" {
			example = "spark-pi.yaml"
		}
		body := exampleBody(t, example)
		driver, _ := body["driver"].(map[string]any)
		annotations := map[string]any{}
		for k, v := range a.driver.Annotations() {
			annotations[k] = v
		}
		driver["annotations"] = annotations
		if a.edit != nil {
			a.edit(body)
		}
		tmpl := map[string]any{"name": a.name, "plugin": map[string]any{"spark": body}}
		if len(a.labels) > 0 {
			tmpl["metadata"] = map[string]any{"labels": a.labels}
		}
		if a.timeout != "" {
			tmpl["timeout"] = a.timeout
		}
		templates = append(templates, tmpl)
		tasks = append(tasks, map[string]any{"name": a.name, "template": a.name})
	}
	entry := apps[0].name
	if dag {
		entry = "main"
		templates = append([]any{map[string]any{"name": "main", "dag": map[string]any{"tasks": tasks}}}, templates...)
	}
	wf := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Workflow",
		"metadata":   map[string]any{"generateName": generateName},
		"spec":       map[string]any{"entrypoint": entry, "templates": templates},
	}
	b, err := json.Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
