package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// Given starts a test: what is submitted.
type Given struct {
	t        *testing.T
	env      *Env
	workflow map[string]any
	cron     map[string]any
	requires []map[string]any // WorkflowTemplates created first
	// namespace is where the workflow runs; empty: Env.Namespace.
	namespace string
}

// Given starts a fixture for t.
func (e *Env) Given(t *testing.T) *Given {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			e.failed(t.Name())
		}
	})
	return &Given{t: t, env: e}
}

// Namespace runs the workflow in ns instead of the environment's
// namespace (one with sparkplug installed by the test itself).
func (g *Given) Namespace(ns string) *Given {
	g.namespace = ns
	return g
}

// Workflow is the workflow to submit: YAML, or "@path" to read a file
// relative to the repository root (e.g. "@examples/spark-pi.yaml").
func (g *Given) Workflow(text string) *Given {
	g.t.Helper()
	g.workflow = g.decode(text, "Workflow")
	return g
}

// CronWorkflow is a CronWorkflow to create; SubmitWorkflow then submits one
// run of it now, as `argo submit --from cronwf/<name>` does.
func (g *Given) CronWorkflow(text string) *Given {
	g.t.Helper()
	g.cron = g.decode(text, "CronWorkflow")
	return g
}

// WorkflowTemplate is created before the workflow is submitted, and
// deleted after the test.
func (g *Given) WorkflowTemplate(text string) *Given {
	g.t.Helper()
	g.requires = append(g.requires, g.decode(text, "WorkflowTemplate"))
	return g
}

// Simulate makes the drivers of the spark templates of everything given
// so far behave as d; with names, only the templates with those names.
func (g *Given) Simulate(d sim.Driver, templates ...string) *Given {
	g.t.Helper()
	objs := append([]map[string]any{}, g.requires...)
	for _, o := range []map[string]any{g.workflow, g.cron} {
		if o != nil {
			objs = append(objs, o)
		}
	}
	total := 0
	for _, o := range objs {
		n, err := sim.Inject(o, d, templates...)
		if err != nil && len(templates) == 0 {
			g.t.Fatalf("simulate: %v", err)
		}
		total += n
	}
	if total == 0 {
		g.t.Fatalf("simulate: no spark template named %v in what is given", templates)
	}
	return g
}

// Object returns the workflow object as decoded, for changes a test makes.
func (g *Given) Object() map[string]any { return g.workflow }

func (g *Given) decode(text, kind string) map[string]any {
	g.t.Helper()
	b := []byte(text)
	if path, ok := strings.CutPrefix(text, "@"); ok {
		var err error
		if b, err = os.ReadFile(filepath.Join(g.env.RepoRoot, path)); err != nil {
			g.t.Fatal(err)
		}
	}
	var obj map[string]any
	if err := yaml.Unmarshal(b, &obj); err != nil {
		g.t.Fatalf("decode %s: %v", kind, err)
	}
	if obj["kind"] != kind {
		g.t.Fatalf("want a %s, got kind %v", kind, obj["kind"])
	}
	return obj
}

// When submits and waits.
func (g *Given) When() *When {
	return &When{t: g.t, env: g.env, g: g, history: map[string]*nodeHistory{}}
}
