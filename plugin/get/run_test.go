package get

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	kfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/golden"
)

// These tests run Run against client-go's and Argo's fake clientsets;
// the real API server's answers (field selectors, RBAC, watches) are
// tested in cmd/sparkplug's integration tests.

func fakes(pods ...*corev1.Pod) (*kfake.Clientset, *wffake.Clientset) {
	var objs []runtime.Object
	for _, p := range pods {
		objs = append(objs, p)
	}
	return kfake.NewSimpleClientset(objs...), wffake.NewSimpleClientset(etl(), nightly())
}

func get(t *testing.T, kube *kfake.Clientset, wfc *wffake.Clientset, o Options) (string, string, error) {
	t.Helper()
	var out, notices strings.Builder
	o.Now, o.Notices = func() time.Time { return now }, &notices
	err := Run(context.Background(), kube, wfc, o, &out)
	return out.String(), notices.String(), err
}

// -o json prints one list whose items are the steps, with their drivers'
// status read from the pods; -o yaml the same list.
func TestGoldenJSONAndYAMLAreOneList(t *testing.T) {
	wf := etl()
	// pi-a's driver is gone.
	kube, wfc := fakes(driverPod(wf, "etl-x7k2p-2", 2), driverPod(nightly(), "nightly-29401", 1))
	out, _, err := get(t, kube, wfc, Options{AllNamespaces: true, Format: FormatJSON})
	if err != nil {
		t.Fatal(err)
	}
	golden.Compare(t, filepath.Join("testdata", "list.golden.json"), out)
	var list List
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != ListKind || list.APIVersion != APIVersion || len(list.Items) != 4 {
		t.Fatalf("%s %s with %d items, want a %s of 4", list.APIVersion, list.Kind, len(list.Items), ListKind)
	}
	status := map[string]string{}
	for _, s := range list.Items {
		status[s.Node] = s.DriverStatus
	}
	if status["pi-a"] != DriverDeleted || status["pi-b"] != "Running" || status["report"] != "" {
		t.Errorf("drivers' status %v, want pi-a Deleted, pi-b Running, report none", status)
	}
	y, _, err := get(t, kube, wfc, Options{AllNamespaces: true, Format: FormatYAML})
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML List
	if err := yaml.Unmarshal([]byte(y), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if a, _ := json.Marshal(fromYAML); string(a) != string(mustJSON(t, list)) {
		t.Errorf("-o yaml differs from -o json:\n%s\n%s", y, out)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// One namespace, one workflow, none: the default table reads no pod, a
// workflow named that does not exist is an error, no steps is a notice.
func TestRunSelects(t *testing.T) {
	kube, wfc := fakes()
	out, _, err := get(t, kube, wfc, Options{Namespace: "jobs"})
	if err != nil || strings.Contains(out, "nightly") || strings.Count(out, "\n") != 4 || strings.Contains(out, "NAMESPACE") {
		t.Errorf("namespace jobs: %v\n%s", err, out)
	}
	if len(kube.Actions()) != 0 {
		t.Errorf("the default table read pods: %v", kube.Actions())
	}
	out, _, err = get(t, kube, wfc, Options{Namespace: "jobs", Workflow: "etl-x7k2p"})
	if err != nil || strings.Count(out, "\n") != 4 {
		t.Errorf("workflow etl-x7k2p: %v\n%s", err, out)
	}
	if _, _, err := get(t, kube, wfc, Options{Namespace: "jobs", Workflow: "nightly-29401"}); err == nil ||
		err.Error() != "workflow nightly-29401 not found in namespace jobs (is it in another? -n NAMESPACE, or -A)" {
		t.Errorf("a workflow of another namespace: %v", err)
	}
	out, notices, err := get(t, kube, wfc, Options{Namespace: "empty"})
	if err != nil || out != "" || notices != "No Spark steps found in namespace empty.\n" {
		t.Errorf("no steps: %v, %q, %q", err, out, notices)
	}
	out, _, err = get(t, kube, wfc, Options{Namespace: "empty", Format: FormatJSON})
	if err != nil || !strings.Contains(out, `"items": []`) {
		t.Errorf("no steps, -o json: %v\n%s", err, out)
	}
}

// A refusal is one line that names the right that is missing.
func TestRunNamesTheMissingRight(t *testing.T) {
	forbidden := func(resource string) k8stesting.ReactionFunc {
		return func(a k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", errNo)
		}
	}
	kube, wfc := fakes()
	wfc.PrependReactor("list", "workflows", forbidden("workflows"))
	_, _, err := get(t, kube, wfc, Options{AllNamespaces: true})
	if err == nil || !strings.HasPrefix(err.Error(), "sparkplug get needs list on workflows in all namespaces, which the API server refused: ") {
		t.Errorf("list refused: %v", err)
	}
	kube, wfc = fakes()
	kube.PrependReactor("get", "pods", forbidden("pods"))
	_, _, err = get(t, kube, wfc, Options{Namespace: "jobs", Format: FormatWide})
	if err == nil || !strings.HasPrefix(err.Error(), "sparkplug get -o wide needs get on pods in namespace jobs (the drivers' status), which the API server refused: ") {
		t.Errorf("get pods refused: %v", err)
	}
	kube, wfc = fakes()
	wfc.PrependWatchReactor("workflows", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "workflows"}, "", errNo)
	})
	_, _, err = get(t, kube, wfc, Options{Namespace: "jobs", Watch: true})
	if err == nil || !strings.HasPrefix(err.Error(), "sparkplug get needs watch on workflows in namespace jobs") || strings.Contains(err.Error(), "\n") {
		t.Errorf("watch refused: %v", err)
	}
}

var errNo = errString("no")

type errString string

func (e errString) Error() string { return string(e) }

// --watch prints a step again only when it changed, in the table's
// widths; a Workflow deleted and made again is printed anew; a watch
// that closes is opened again; the end of ctx ends it without error.
func TestWatchPrintsWhatChanged(t *testing.T) {
	kube, wfc := fakes()
	watches := make(chan *watch.FakeWatcher, 2)
	wfc.PrependWatchReactor("workflows", func(k8stesting.Action) (bool, watch.Interface, error) {
		w := watch.NewFake()
		watches <- w
		return true, w, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	var out strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, kube, wfc, Options{Namespace: "jobs", Watch: true, Now: func() time.Time { return now }}, &out)
	}()
	w := <-watches
	wf := etl()
	w.Modify(wf.DeepCopy()) // nothing changed: nothing printed
	running := wf.Status.Nodes["etl-x7k2p-3"]
	running.Phase, running.Message = wfv1.NodeRunning, "SUBMITTED"
	wf.Status.Nodes["etl-x7k2p-3"] = running
	w.Modify(wf.DeepCopy())
	w.Stop() // the server closes the watch: opened again
	w = <-watches
	w.Delete(wf.DeepCopy())
	w.Add(wf.DeepCopy()) // made again: its three steps anew
	w.Stop()
	<-watches // the events above were all received
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1+3+1+3 {
		t.Fatalf("%d lines, want the header, 3 steps, the one changed, 3 again:\n%s", len(lines), out.String())
	}
	if !strings.Contains(lines[4], "report   Running     SUBMITTED") {
		t.Errorf("the changed row, in the first rows' widths: %q\n%s", lines[4], out.String())
	}
}

// A watch whose version is too old to resume lists again and prints what
// changed meanwhile; with -o json, each step printed is one object.
func TestWatchListsAgainWhenItsVersionExpired(t *testing.T) {
	kube, wfc := fakes(driverPod(etl(), "etl-x7k2p-2", 2))
	watches := make(chan *watch.FakeWatcher, 2)
	wfc.PrependWatchReactor("workflows", func(k8stesting.Action) (bool, watch.Interface, error) {
		w := watch.NewFake()
		watches <- w
		return true, w, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	var out strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, kube, wfc, Options{Namespace: "jobs", Watch: true, Format: FormatJSON}, &out)
	}()
	w := <-watches
	// Meanwhile, report starts: the List after the expiry shows it.
	wf := etl()
	n := wf.Status.Nodes["etl-x7k2p-3"]
	n.Phase = wfv1.NodeRunning
	wf.Status.Nodes["etl-x7k2p-3"] = n
	if err := wfc.Tracker().Update(wfv1.SchemeGroupVersion.WithResource("workflows"), wf, "jobs"); err != nil {
		t.Fatal(err)
	}
	expired := apierrors.NewResourceExpired("too old resource version")
	w.Error(&expired.ErrStatus)
	<-watches // the List again, then a new watch
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(out.String()))
	var nodes []string
	for dec.More() {
		var s Step
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		nodes = append(nodes, s.Node+"/"+s.Phase)
	}
	if want := "pi-a/Succeeded pi-b/Running report/Pending report/Running"; strings.Join(nodes, " ") != want {
		t.Errorf("objects printed %q, want %q", nodes, want)
	}
}
