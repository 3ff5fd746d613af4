//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// The plan of the examples' run: e2e/testdata/examples-plan.yaml, by file
// (see its comment). The examples themselves carry nothing of it: users
// copy them.
const (
	examplesPlanFile = "examples-plan.yaml"
	e2eRun           = "run"
	e2eSkip          = "skip"
)

// examplePlan is one example's entry in the plan.
type examplePlan struct {
	E2E      string   `json:"e2e"`
	Reason   string   `json:"reason,omitempty"`
	Requires []string `json:"requires,omitempty"`
}

// readExamplesPlan reads the plan.
func readExamplesPlan(t *testing.T) map[string]examplePlan {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.RepoRoot, "e2e", "testdata", examplesPlanFile))
	if err != nil {
		t.Fatal(err)
	}
	var plan map[string]examplePlan
	if err := yaml.UnmarshalStrict(b, &plan); err != nil {
		t.Fatalf("%s: %v", examplesPlanFile, err)
	}
	return plan
}

// exampleDoc is one document of a file in examples/.
type exampleDoc struct {
	file string
	text string
	obj  map[string]any
}

func (d exampleDoc) kind() string { s, _ := d.obj["kind"].(string); return s }

// Every Workflow, WorkflowTemplate and CronWorkflow in examples/ meant to
// run (run in the plan) runs on the real controller and succeeds,
// its Spark drivers simulated to exit 0. A WorkflowTemplate runs through a
// Workflow that references it; a CronWorkflow is created and run once now,
// as `argo submit --from cronwf/<name>` does. A document marked skip is
// only checked by the API server (a dry-run create against Argo's CRD
// schemas) when it is a template or a CronWorkflow, and is otherwise
// skipped with its reason.
func TestExamples(t *testing.T) {
	onceAcrossModes(t, "the examples in examples/")
	t.Parallel()
	docs := readExamples(t)
	if len(docs) == 0 {
		t.Fatal("no examples found")
	}
	plan := readExamplesPlan(t)
	for _, d := range docs {
		t.Run(d.file+"/"+d.kind(), func(t *testing.T) {
			parallel(t)
			p, ok := plan[d.file]
			if !ok {
				t.Fatalf("%s has no entry in %s", d.file, examplesPlanFile)
			}
			runExample(t, d, p, docs)
		})
	}
}

func runExample(t *testing.T, d exampleDoc, p examplePlan, all []exampleDoc) {
	switch d.kind() {
	case "Workflow", "WorkflowTemplate", "CronWorkflow":
	default:
		t.Skipf("%s is not a kind e2e submits", d.kind())
	}
	switch mode := p.E2E; mode {
	case e2eSkip:
		reason := strings.TrimSpace(p.Reason)
		if reason == "" {
			t.Errorf("%s: %s says %s but gives no reason", d.file, examplesPlanFile, e2eSkip)
		}
		if d.kind() != "Workflow" {
			dryRunCreate(t, d)
			t.Logf("the API server accepts it (dry run); not run: %s", reason)
			return
		}
		t.Skipf("skipped: %s", reason)
	case e2eRun:
	default:
		t.Fatalf("%s: %s says %q; want %q or %q", d.file, examplesPlanFile, mode, e2eRun, e2eSkip)
	}

	applySetup(t, d.file)
	g := Given(t)
	var names []string
	for _, req := range p.Requires {
		found := false
		for _, r := range all {
			if r.file == req && r.kind() == "WorkflowTemplate" {
				g.WorkflowTemplate(r.text)
				names = append(names, templateName(r))
				found = true
			}
		}
		if !found {
			t.Fatalf("%s requires %s, which holds no WorkflowTemplate in examples/", d.file, req)
		}
	}
	switch d.kind() {
	case "Workflow":
		g.Workflow(d.text)
	case "CronWorkflow":
		g.CronWorkflow(d.text)
	case "WorkflowTemplate":
		g.WorkflowTemplate(d.text)
		names = append(names, templateName(d))
		g.Workflow(workflowFromTemplate(templateName(d)))
	}
	// Examples that create the same template take turns.
	unlock := lockTemplates(names)
	t.Cleanup(unlock)
	g.Simulate(sim.Succeed(2*time.Second)).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeSucceeded, 3*time.Minute).
		Then().
		ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
			if len(nodes) == 0 {
				t.Errorf("%s ran no Spark step", d.file)
			}
			for _, n := range nodes {
				if !appIDPattern.MatchString(result(n)) {
					t.Errorf("node %s: outputs.result %q is not an application id", n.DisplayName, result(n))
				}
			}
		})
}

// applySetup applies e2e/testdata/examples/<file>, when there is one: the
// objects an example needs that a user makes beforehand (its comment says
// which), here made for the test cluster.
func applySetup(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.RepoRoot, "e2e", "testdata", "examples", file))
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if env.Namespace != "e2e" {
		t.Fatalf("the setup of %s is written for the namespace e2e, not %s", file, env.Namespace)
	}
	if err := env.Cluster.Apply(context.Background(), b); err != nil {
		t.Fatalf("setup of %s: %v", file, err)
	}
}

// readExamples reads every document of examples/*.yaml.
func readExamples(t *testing.T) []exampleDoc {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(env.RepoRoot, "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var docs []exampleDoc
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
		for {
			raw, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var obj map[string]any
			if err := yaml.Unmarshal(raw, &obj); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(obj) == 0 {
				continue
			}
			docs = append(docs, exampleDoc{file: filepath.Base(f), text: string(raw), obj: obj})
		}
	}
	return docs
}

// dryRunCreate asks the API server to validate d, creating nothing.
func dryRunCreate(t *testing.T, d exampleDoc) {
	t.Helper()
	ctx := context.Background()
	client := env.Workflows.ArgoprojV1alpha1()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	b, err := yaml.YAMLToJSON([]byte(d.text))
	if err != nil {
		t.Fatal(err)
	}
	switch d.kind() {
	case "WorkflowTemplate":
		var o wfv1.WorkflowTemplate
		if err = yaml.UnmarshalStrict(b, &o); err == nil {
			_, err = client.WorkflowTemplates(env.Namespace).Create(ctx, &o, dry)
		}
	case "CronWorkflow":
		var o wfv1.CronWorkflow
		if err = yaml.UnmarshalStrict(b, &o); err == nil {
			_, err = client.CronWorkflows(env.Namespace).Create(ctx, &o, dry)
		}
	}
	if err != nil {
		t.Fatalf("%s: %v", d.file, err)
	}
}

// workflowFromTemplate is the Workflow `argo submit --from
// workflowtemplate/<name>` creates.
func workflowFromTemplate(name string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: ` + name + `-
  labels:
    workflows.argoproj.io/workflow-template: ` + name + `
spec:
  workflowTemplateRef:
    name: ` + name + `
`
}

func templateName(d exampleDoc) string {
	md, _ := d.obj["metadata"].(map[string]any)
	s, _ := md["name"].(string)
	return s
}

var (
	templateLocksMu sync.Mutex
	templateLocks   = map[string]*sync.Mutex{}
)

// lockTemplates serializes the examples that create the same templates.
func lockTemplates(names []string) (unlock func()) {
	sort.Strings(names)
	var held []*sync.Mutex
	for _, n := range names {
		templateLocksMu.Lock()
		m := templateLocks[n]
		if m == nil {
			m = &sync.Mutex{}
			templateLocks[n] = m
		}
		templateLocksMu.Unlock()
		m.Lock()
		held = append(held, m)
	}
	return func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i].Unlock()
		}
	}
}
