//go:build bench

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// RunLabel marks every pod of one run: the drivers (through the spark
// body's driver.labels, or the SparkApplication's), the plain pods
// (through the template's metadata).
const RunLabel = "scale-bench/run"

// TestScale runs each launcher with N steps, for each N, one after
// another, and writes the tables and plots. The launchers of each mode
// share one control plane, started for them (sidecar mode's first); Argo's
// own and the operator run in controller mode's when it runs, so that the
// goals compare the same control plane.
func TestScale(t *testing.T) {
	ns := []int{200, 1000}
	if s := os.Getenv("SPARKPLUG_BENCH_N"); s != "" {
		ns = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				t.Fatalf("SPARKPLUG_BENCH_N=%q: want counts like 200,1000", s)
			}
			ns = append(ns, n)
		}
	}
	kinds := Kinds
	if s := os.Getenv("SPARKPLUG_BENCH_KINDS"); s != "" {
		kinds = strings.Split(s, ",")
		for _, k := range kinds {
			if !slices.Contains(Kinds, k) {
				t.Fatalf("SPARKPLUG_BENCH_KINDS: no launcher %q (launchers: %s)", k, strings.Join(Kinds, ","))
			}
		}
	}
	maxAgents := 200
	if s := os.Getenv("SPARKPLUG_BENCH_MAX_AGENTS"); s != "" {
		var err error
		if maxAgents, err = strconv.Atoi(s); err != nil {
			t.Fatalf("SPARKPLUG_BENCH_MAX_AGENTS=%q: %v", s, err)
		}
	}
	modeOf := map[string]string{
		KindSparkplug: framework.ModeSidecar, KindSidecarWF: framework.ModeSidecar,
		KindController: framework.ModeController, KindControllerWF: framework.ModeController,
	}
	neutral := framework.ModeSidecar
	if slices.ContainsFunc(kinds, func(k string) bool { return modeOf[k] == framework.ModeController }) {
		neutral = framework.ModeController
	}
	var results []Result
	for _, mode := range []string{framework.ModeSidecar, framework.ModeController} {
		var mine []string
		for _, k := range kinds {
			if m, ok := modeOf[k]; (ok && m == mode) || (!ok && mode == neutral) {
				mine = append(mine, k)
			}
		}
		if len(mine) == 0 {
			continue
		}
		t.Run(mode, func(t *testing.T) {
			startEnv(t, mode)
			for _, n := range ns {
				for _, kind := range mine {
					start := time.Now()
					var r Result
					switch kind {
					case KindSparkplug, KindController:
						r = runLoop(t, kind, n)
					case KindPlain:
						r = runPlain(t, n)
					case KindSidecarWF:
						if n > maxAgents {
							r = Result{Kind: kind, N: n, Skipped: fmt.Sprintf("%d agent pods, each an argoexec and a sparkplug sidecar process (about 40 MiB each), do not fit this machine (SPARKPLUG_BENCH_MAX_AGENTS=%d)", n, maxAgents)}
							break
						}
						r = runWorkflows(t, kind, n, false)
					case KindControllerWF:
						r = runWorkflows(t, kind, n, n > maxAgents)
					case KindPlainWF:
						r = runWorkflows(t, kind, n, false)
					case KindOperator:
						r = runOperator(t, n)
					}
					r.Date = time.Now().UTC().Format("2006-01-02")
					if r.Skipped != "" {
						t.Logf("%s, N=%d: not run: %s", kind, n, r.Skipped)
					} else {
						t.Logf("%s, N=%d (run took %v): first pod %v, all %v (%.0f/min), done %v, %.2f API requests per launch (sparkplug's own %.2f), sparkplug's processes: peak RSS %.1f MiB summed (controller replica %.1f MiB, agent pod %.1f MiB), CPU %v summed (agent pod %v), polls %d p50 %v p99 %v, %.3f API requests per poll",
							kind, n, time.Since(start).Round(time.Second), r.First(), r.All(), r.PerMinute(), r.Done, r.APIRequests/float64(n), r.OwnRequests/float64(n),
							float64(r.PeakRSS)/(1<<20), float64(r.ControllerRSS)/(1<<20), float64(r.AgentRSS)/(1<<20), r.CPU, r.AgentCPU,
							len(r.Polls), Quantile(r.Polls, .5), Quantile(r.Polls, .99), r.PollRequests/float64(max(len(r.Polls), 1)))
					}
					results = append(results, r)
					write(t, results)
				}
			}
		})
		if t.Failed() {
			return
		}
	}
	fmt.Println(Table(results))
	if os.Getenv("SPARKPLUG_BENCH_WRITE") == "" {
		t.Log("SPARKPLUG_BENCH_WRITE unset: docs/operations.md and docs/bench left as they are")
	}
}

// write merges results into docs/bench/scale.json (the sizes and
// launchers of earlier runs this one did not measure keep their figures)
// and rewrites the How fast section of docs/operations.md and the plots
// from it (linked relative to docs/), if
// SPARKPLUG_BENCH_WRITE is set: after each launcher's run, so that a
// failure later in a long run loses none of the figures before it.
func write(t *testing.T, results []Result) {
	t.Helper()
	if os.Getenv("SPARKPLUG_BENCH_WRITE") == "" {
		return
	}
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "docs", "bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(dir, "scale.json")
	old, err := Load(saved)
	if err != nil {
		t.Fatal(err)
	}
	all := Merge(old, results)
	if err := Save(saved, all); err != nil {
		t.Fatal(err)
	}
	var plots []string
	for _, n := range sizes(all) {
		rel := fmt.Sprintf("bench/scale-%d.png", n)
		if err := Plot(filepath.Join(root, "docs", rel), n, all); err != nil {
			t.Fatal(err)
		}
		plots = append(plots, rel)
	}
	if err := Rewrite(filepath.Join(root, "docs", "operations.md"), Section(machine(), all, plots)); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote the How fast tables of docs/operations.md, %s and docs/%s", saved, strings.Join(plots, ", docs/"))
}

// driverRun is how long each simulated driver runs: long enough that all
// N run at once while the polls are measured, however slow the launch.
func driverRun(n int) time.Duration { return 45*time.Second + time.Duration(n)*90*time.Millisecond }

// loopWorkflow is a workflow whose steps loop runs template pi n times,
// each with its own argument i; spec holds more of the workflow's spec,
// pi the template's kind and body (4 spaces in, after its inputs).
func loopWorkflow(name string, n int, spec, pi string) string {
	return fmt.Sprintf(`
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: %s
spec:
  entrypoint: main%s
  templates:
    - name: main
      steps:
        - - name: pi
            template: pi
            arguments: {parameters: [{name: i, value: "{{item}}"}]}
            withSequence: {count: "%d"}
    - name: pi
      inputs: {parameters: [{name: i}]}
%s`, name, spec, n, pi)
}

// sparkWorkflow fans out n Spark steps, each with its own argument; in
// sidecar mode, the sidecar serves its profiles at pprofAddr.
func sparkWorkflow(run string, n int) string {
	return loopWorkflow("scale-spark-", n, fmt.Sprintf(`
  podMetadata:
    annotations: {%s: "--pprof-addr=%s"}`, framework.ServeArgsAnnotation, pprofAddr), sparkTemplate(run, driverRun(n), "{{inputs.parameters.i}}"))
}

// sparkTemplate is the body of a Spark step's template (4 spaces in,
// after its inputs) whose driver runs for run and takes argument arg.
func sparkTemplate(run string, d time.Duration, arg string) string {
	ann, _ := json.Marshal(sim.Succeed(d).Annotations())
	return fmt.Sprintf(`      plugin:
        spark:
          type: Scala
          mode: cluster
          image: spark:3.5.3
          sparkVersion: 3.5.3
          mainClass: org.apache.spark.examples.SparkPi
          mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
          arguments: ["%s"]
          driver: {cores: 1, memory: 512m, serviceAccount: spark, labels: {%s: %s}, annotations: %s}
          executor: {cores: 1, memory: 512m}
          dynamicAllocation: {enabled: true, initialExecutors: 0, minExecutors: 0, maxExecutors: 2}
`, arg, RunLabel, run, ann)
}

// oneStepWorkflow is workflow i of a run of n one-step workflows: the
// entrypoint is the Spark step (spark) or the container step itself, as a
// CronWorkflow converted from a ScheduledSparkApplication runs it.
func oneStepWorkflow(run string, n, i int, spark bool) string {
	body := fmt.Sprintf(`      metadata: {labels: {%s: %s}}
      container:
        image: spark:3.5.3
        command: [/opt/spark/bin/spark-submit]
        args: [--class, org.apache.spark.examples.SparkPi, "local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar", "%d"]
`, RunLabel, run, i)
	if spark {
		body = sparkTemplate(run, driverRun(n), fmt.Sprint(i))
	}
	return fmt.Sprintf(`
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: scale-wf-
  labels: {%s: %s}
spec:
  entrypoint: pi
  templates:
    - name: pi
%s`, RunLabel, run, body)
}

// pprofAddr is where the sidecar of a Spark run serves Go's profiles
// (one sidecar at a time runs here).
const pprofAddr = "127.0.0.1:6065"

// heapTop is the live heap by function of the sparkplug serving its
// profiles at addr.
func heapTop(addr string) string {
	out, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index=inuse_space", "http://"+addr+"/debug/pprof/heap").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(no heap profile: %v: %s)", err, out)
	}
	lines := strings.Split(string(out), "\n")
	return strings.Join(lines[:min(len(lines), 30)], "\n")
}

// plainWorkflow is the same fan-out with container steps.
func plainWorkflow(run string, n int) string {
	return loopWorkflow("scale-plain-", n, "", fmt.Sprintf(`      metadata: {labels: {%s: %s}}
      container:
        image: spark:3.5.3
        command: [/opt/spark/bin/spark-submit]
        args: [--class, org.apache.spark.examples.SparkPi, "local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar", "{{inputs.parameters.i}}"]
`, RunLabel, run))
}

// runLoop runs the loop of n Spark steps in one workflow, in the
// environment's mode (kind KindSparkplug: sidecar, KindController).
func runLoop(t *testing.T, kind string, n int) Result {
	ctx := context.Background()
	ctl := env.SparkplugControllers
	if ctl != nil {
		// Fresh replicas: their peak RSS, CPU and counters are this run's.
		if err := ctl.Rollout(ctx); err != nil {
			t.Fatal(err)
		}
	}
	run := runID(kind, n)
	w := newPodWatch(t, run)
	api0 := apiRequests(t)
	wfw0, tsw0 := writes(t)
	samp := sampleSparkplug(ctx)
	defer samp.stop()
	wf := submit(t, sparkWorkflow(run, n))
	r := Result{Kind: kind, N: n}
	w.waitCreated(t, wf, n, 10*time.Minute)
	r.Created = w.created()
	r.APIRequests = apiRequests(t) - api0
	// The sidecar (controller replicas) started with the agent pod (this
	// run): all its requests so far were this launch's (and its caches'
	// first lists).
	sc := samp.waitSidecars(t, 1)[0]
	r.OwnRequests = ownRequests(t, []argo.Sidecar{sc})

	w.waitRunning(t, wf, n, 5*time.Minute)
	if ctl == nil {
		// Polls while the sidecar follows the n drivers, all running.
		before := sidecarRequests(t, sc.Addr)
		r.Polls = poll(t, wf, sc.Addr, max(2000, 2*n))
		r.PollRequests = sidecarRequests(t, sc.Addr) - before
		t.Logf("the sidecar's live heap, following %d drivers:\n%s", n, heapTop(pprofAddr))
	} else {
		logControllerHeap(t, n)
	}

	r.Done = waitWorkflow(t, wf, driverRun(n)+10*time.Minute)
	wfw, tsw := writes(t)
	r.WorkflowWrites, r.TaskSetWrites = wfw-wfw0, tsw-tsw0
	samp.stop()
	samp.fill(&r)
	cleanup(t, wf, run)
	return r
}

// runWorkflows runs n workflows of one step each, submitted together:
// Spark steps in the environment's mode (KindSidecarWF, KindControllerWF,
// the latter with its agent pods left unplayed if unplay), or container
// steps (KindPlainWF).
func runWorkflows(t *testing.T, kind string, n int, unplay bool) Result {
	ctx := context.Background()
	spark := kind != KindPlainWF
	ctl := env.SparkplugControllers
	if spark && ctl != nil {
		if err := ctl.Rollout(ctx); err != nil {
			t.Fatal(err)
		}
	}
	unplayed.Store(unplay)
	defer unplayed.Store(false)
	run := runID(kind, n)
	texts := make([]string, n)
	for i := range texts {
		texts[i] = oneStepWorkflow(run, n, i, spark)
	}
	w := newPodWatch(t, run)
	var ts *taskSetWatch
	if spark {
		ts = newTaskSetWatch(t)
	}
	api0 := apiRequests(t)
	wfw0, tsw0 := writes(t)
	var samp *sparkplugSampler
	if spark {
		samp = sampleSparkplug(ctx)
		defer samp.stop()
	}
	submitAll(t, texts)
	r := Result{Kind: kind, N: n, Unplayed: unplay, OwnRequests: -1, WorkflowWrites: -1, TaskSetWrites: -1}
	w.waitCreated(t, nil, n, 15*time.Minute)
	r.Created = w.created()
	r.APIRequests = apiRequests(t) - api0
	if !spark {
		// KWOK runs container pods forever: the workflows are never done
		// here.
		cleanup(t, nil, run)
		return r
	}
	r.TaskSetsAll = ts.all(n)
	t.Logf("%s, N=%d: Argo's TaskSets created, the last at %v; the last driver at %v", kind, n, r.TaskSetsAll, r.All())
	var scs []argo.Sidecar
	if !unplay {
		scs = samp.waitSidecars(t, n)
	}
	r.OwnRequests = ownRequests(t, scs)
	w.waitRunning(t, nil, n, 5*time.Minute)
	if ctl != nil {
		logControllerHeap(t, n)
	}
	r.Done = waitWorkflows(t, run, n, driverRun(n)+15*time.Minute)
	wfw, tsw := writes(t)
	r.WorkflowWrites, r.TaskSetWrites = wfw-wfw0, tsw-tsw0
	samp.stop()
	samp.fill(&r)
	cleanup(t, nil, run)
	return r
}

// ownRequests are sparkplug's Kubernetes client requests so far: the
// controller replicas' in controller mode (the acknowledgers make none),
// else the sum over the sidecars scs.
func ownRequests(t *testing.T, scs []argo.Sidecar) float64 {
	t.Helper()
	if ctl := env.SparkplugControllers; ctl != nil {
		var sum float64
		for i := range ctl.Replicas() {
			sum += metricsSum(t, ctl.MetricsURL(i))
		}
		return sum
	}
	var sum float64
	for _, sc := range scs {
		sum += sidecarRequests(t, sc.Addr)
	}
	return sum
}

// logControllerHeap logs the leading controller replica's live heap by
// function while it follows n drivers.
func logControllerHeap(t *testing.T, n int) {
	ctl := env.SparkplugControllers
	leader, err := ctl.Leader(context.Background())
	if err != nil {
		t.Logf("no controller heap: %v", err)
		return
	}
	if addr := ctl.PprofAddr(leader); addr != "" {
		t.Logf("the leading controller's live heap, following %d drivers:\n%s", n, heapTop(addr))
	}
}

func runPlain(t *testing.T, n int) Result {
	run := runID("plain", n)
	w := newPodWatch(t, run)
	api0 := apiRequests(t)
	wf := submit(t, plainWorkflow(run, n))
	w.waitCreated(t, wf, n, 10*time.Minute)
	r := Result{Kind: KindPlain, N: n, Created: w.created(), APIRequests: apiRequests(t) - api0, OwnRequests: -1, WorkflowWrites: -1, TaskSetWrites: -1}
	// KWOK runs container pods forever: the workflow is never done here.
	cleanup(t, wf, run)
	return r
}

var runSeq int

func runID(kind string, n int) string {
	runSeq++
	return fmt.Sprintf("%s-%d-%d-%d", kind, n, runSeq, time.Now().Unix())
}

// submitted is when the workflow of the current run was created.
var submitted time.Time

func submit(t *testing.T, text string) *wfv1.Workflow {
	t.Helper()
	var wf wfv1.Workflow
	if err := yaml.UnmarshalStrict([]byte(text), &wf); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	submitted = time.Now()
	created, err := env.Workflows.ArgoprojV1alpha1().Workflows(env.Namespace).Create(context.Background(), &wf, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return created
}

// submitAll creates the workflows of texts at once, sixteen at a time
// (as the operator's SparkApplications), as a CronWorkflow's runs that
// fall due together.
func submitAll(t *testing.T, texts []string) {
	t.Helper()
	wfs := make([]*wfv1.Workflow, len(texts))
	for i, text := range texts {
		wfs[i] = new(wfv1.Workflow)
		if err := yaml.UnmarshalStrict([]byte(text), wfs[i]); err != nil {
			t.Fatalf("workflow: %v", err)
		}
	}
	client := env.Workflows.ArgoprojV1alpha1().Workflows(env.Namespace)
	submitted = time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(wfs))
	next := make(chan *wfv1.Workflow)
	for range 16 {
		wg.Go(func() {
			for wf := range next {
				if _, err := client.Create(context.Background(), wf, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, wf := range wfs {
		next <- wf
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("submit: %v", err)
	}
}

// taskSetWatch records when each WorkflowTaskSet of the namespace (Argo
// creates one per workflow with a plugin step) was first seen, since
// submitted: how fast Argo hands one-step workflows to sparkplug.
type taskSetWatch struct {
	mu   sync.Mutex
	seen map[string]time.Duration
}

func newTaskSetWatch(t *testing.T) *taskSetWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w := &taskSetWatch{seen: map[string]time.Duration{}}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(env.Cluster.Dynamic, 0, env.Namespace, nil)
	inf := f.ForResource(wfv1.SchemeGroupVersion.WithResource("workflowtasksets")).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		o, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		now := time.Since(submitted)
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := w.seen[string(o.GetUID())]; !ok {
			w.seen[string(o.GetUID())] = now
		}
	}}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("TaskSet watch did not sync")
	}
	return w
}

// all is when the n-th TaskSet was first seen (0: fewer seen).
func (w *taskSetWatch) all(n int) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := make([]time.Duration, 0, len(w.seen))
	for _, v := range w.seen {
		d = append(d, v)
	}
	slices.Sort(d)
	return at(d, n-1)
}

// podWatch records when each pod of a run was first seen, and first seen
// running, since submitted.
type podWatch struct {
	mu      sync.Mutex
	seen    map[string]time.Duration
	running map[string]bool
	stop    context.CancelFunc
}

func newPodWatch(t *testing.T, run string) *podWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &podWatch{seen: map[string]time.Duration{}, running: map[string]bool{}, stop: cancel}
	f := informers.NewSharedInformerFactoryWithOptions(env.Kube, 0, informers.WithNamespace(env.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = RunLabel + "=" + run }))
	inf := f.Core().V1().Pods().Informer()
	see := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		now := time.Since(submitted)
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := w.seen[p.Name]; !ok {
			w.seen[p.Name] = now
		}
		if p.Status.Phase == corev1.PodRunning {
			w.running[p.Name] = true
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: see, UpdateFunc: func(_, o any) { see(o) }}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("pod watch did not sync")
	}
	t.Cleanup(cancel)
	return w
}

func (w *podWatch) count() (seen, running int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen), len(w.running)
}

func (w *podWatch) created() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := make([]time.Duration, 0, len(w.seen))
	for _, v := range w.seen {
		d = append(d, v)
	}
	slices.Sort(d)
	return d
}

func (w *podWatch) waitCreated(t *testing.T, wf *wfv1.Workflow, n int, timeout time.Duration) {
	t.Helper()
	w.waitFor(t, wf, fmt.Sprintf("%d pods created", n), timeout, func(seen, _ int) bool { return seen >= n })
}

func (w *podWatch) waitRunning(t *testing.T, wf *wfv1.Workflow, n int, timeout time.Duration) {
	t.Helper()
	w.waitFor(t, wf, fmt.Sprintf("%d pods running", n), timeout, func(_, running int) bool { return running >= n })
}

// waitFor waits until done, failing at once if wf (nil: none) ends.
func (w *podWatch) waitFor(t *testing.T, wf *wfv1.Workflow, what string, timeout time.Duration, done func(seen, running int) bool) {
	t.Helper()
	checked := time.Now()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if done(w.count()) {
			return true, nil
		}
		if wf != nil && time.Since(checked) > 2*time.Second {
			checked = time.Now()
			got, err := env.Workflows.ArgoprojV1alpha1().Workflows(wf.Namespace).Get(ctx, wf.Name, metav1.GetOptions{})
			if err == nil && got.Status.Phase.Completed() {
				return false, fmt.Errorf("workflow %s ended %s: %s", wf.Name, got.Status.Phase, got.Status.Message)
			}
		}
		return false, nil
	})
	if err != nil {
		seen, running := w.count()
		t.Fatalf("%s: not within %v (%d created, %d running): %v", what, timeout, seen, running, err)
	}
}

// waitWorkflow waits until wf succeeded and returns when, since submitted.
func waitWorkflow(t *testing.T, wf *wfv1.Workflow, timeout time.Duration) time.Duration {
	t.Helper()
	var last *wfv1.Workflow
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := env.Workflows.ArgoprojV1alpha1().Workflows(wf.Namespace).Get(ctx, wf.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = got
		return got.Status.Phase.Completed(), nil
	})
	if err != nil {
		t.Fatalf("workflow %s not done within %v", wf.Name, timeout)
	}
	if last.Status.Phase != wfv1.WorkflowSucceeded {
		t.Fatalf("workflow %s: %s %q", wf.Name, last.Status.Phase, last.Status.Message)
	}
	return time.Since(submitted)
}

// waitWorkflows waits until the n workflows of run succeeded and returns
// when, since submitted.
func waitWorkflows(t *testing.T, run string, n int, timeout time.Duration) time.Duration {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: RunLabel + "=" + run}
	phases := map[wfv1.WorkflowPhase]int{}
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := env.Workflows.ArgoprojV1alpha1().Workflows(env.Namespace).List(ctx, sel)
		if err != nil {
			return false, nil
		}
		phases = map[wfv1.WorkflowPhase]int{}
		done := 0
		for _, wf := range list.Items {
			phases[wf.Status.Phase]++
			if wf.Status.Phase.Completed() {
				done++
			}
		}
		return done >= n, nil
	})
	if err != nil || phases[wfv1.WorkflowSucceeded] != n {
		t.Fatalf("workflows of run %s: %v, phases %v; want all %d Succeeded", run, err, phases, n)
	}
	return time.Since(submitted)
}

// cleanup deletes the workflow (nil: the run's workflows, by its label)
// and the run's pods at once (the garbage collector would take minutes
// for 1,000) and waits until they are gone, and with them the agent pods
// (and their played processes).
func cleanup(t *testing.T, wf *wfv1.Workflow, run string) {
	t.Helper()
	ctx := context.Background()
	policy := metav1.DeletePropagationBackground
	sel := metav1.ListOptions{LabelSelector: RunLabel + "=" + run}
	wfs := env.Workflows.ArgoprojV1alpha1().Workflows(env.Namespace)
	if wf != nil {
		_ = wfs.Delete(ctx, wf.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
	} else {
		_ = wfs.DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &policy}, sel)
	}
	_ = env.Kube.CoreV1().Pods(env.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
	agents := metav1.ListOptions{LabelSelector: "workflows.argoproj.io/component=agent"}
	_ = env.Kube.CoreV1().Pods(env.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, agents)
	err := wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(ctx, sel)
		if err != nil || len(pods.Items) > 0 {
			return false, nil
		}
		ags, err := env.Kube.CoreV1().Pods(env.Namespace).List(ctx, agents)
		if err != nil || len(ags.Items) > 0 {
			return false, nil
		}
		left, err := wfs.List(ctx, sel)
		return err == nil && len(left.Items) == 0 && len(env.Sidecars.Of(env.Namespace, "")) == 0, nil
	})
	if err != nil {
		t.Fatalf("the workflows, pods and agents of run %s are not gone after 10m", run)
	}
}

// apiRequests is the kube-apiserver's count of requests so far, all
// clients and verbs but WATCH (a watch is one long request).
func apiRequests(t *testing.T) float64 {
	t.Helper()
	b, err := env.Kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("kube-apiserver metrics: %v", err)
	}
	return sumCounter(b, "apiserver_request_total", func(labels string) bool { return !strings.Contains(labels, `verb="WATCH"`) })
}

// writes are the kube-apiserver's counts so far of Workflow updates (PUT) and
// patches and of WorkflowTaskSet status patches, all clients.
func writes(t *testing.T) (workflows, taskSetStatus float64) {
	t.Helper()
	b, err := env.Kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("kube-apiserver metrics: %v", err)
	}
	write := func(labels string) bool {
		return strings.Contains(labels, `verb="PUT"`) || strings.Contains(labels, `verb="UPDATE"`) || strings.Contains(labels, `verb="PATCH"`)
	}
	workflows = sumCounter(b, "apiserver_request_total", func(l string) bool {
		return write(l) && strings.Contains(l, `resource="workflows"`)
	})
	taskSetStatus = sumCounter(b, "apiserver_request_total", func(l string) bool {
		return strings.Contains(l, `verb="PATCH"`) && strings.Contains(l, `resource="workflowtasksets"`) && strings.Contains(l, `subresource="status"`)
	})
	return workflows, taskSetStatus
}

// sidecarRequests is the sidecar's count of its Kubernetes client's
// requests so far.
func sidecarRequests(t *testing.T, addr string) float64 {
	t.Helper()
	return metricsSum(t, "http://"+addr+"/metrics")
}

// metricsSum is the sum of rest_client_requests_total at a /metrics URL.
func metricsSum(t *testing.T, url string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("sparkplug metrics: %v", err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return sumCounter(b.Bytes(), "rest_client_requests_total", func(string) bool { return true })
}

// sumCounter sums the samples of a counter in Prometheus' text format
// whose labels pass keep.
func sumCounter(text []byte, name string, keep func(labels string) bool) float64 {
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		v, err := strconv.ParseFloat(rest[i+1:], 64)
		if err == nil && keep(rest[:i]) {
			sum += v
		}
	}
	return sum
}

// sparkplugSampler samples the peak RSS and CPU time of every sparkplug
// process until stopped: the controller's replicas and the agent pods'
// plugin sidecars (sparkplug serve, or the acknowledger), each process by
// its pid (a sidecar exits with its workflow, a replica may be replaced).
type sparkplugSampler struct {
	mu       sync.Mutex
	sidecars map[int]argo.Sidecar
	procs    map[int]*procPeak
	cancel   context.CancelFunc
	done     chan struct{}
	once     sync.Once
}

type procPeak struct {
	controller bool
	rss        int64
	cpu        time.Duration
}

func sampleSparkplug(ctx context.Context) *sparkplugSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &sparkplugSampler{sidecars: map[int]argo.Sidecar{}, procs: map[int]*procPeak{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			s.sample()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *sparkplugSampler) sample() {
	type proc struct {
		pid        int
		controller bool
	}
	var procs []proc
	if ctl := env.SparkplugControllers; ctl != nil {
		for _, i := range ctl.Running() {
			if pid := ctl.Pid(i); pid > 0 {
				procs = append(procs, proc{pid: pid, controller: true})
			}
		}
	}
	scs := env.Sidecars.Of(env.Namespace, "")
	for _, sc := range scs {
		if sc.Pid > 0 {
			procs = append(procs, proc{pid: sc.Pid})
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range scs {
		if sc.Pid > 0 {
			s.sidecars[sc.Pid] = sc
		}
	}
	for _, p := range procs {
		peak, _, errM := framework.ProcMemory(p.pid)
		cpu, errC := framework.ProcCPU(p.pid)
		if errM != nil || errC != nil {
			continue // exited meanwhile
		}
		pp := s.procs[p.pid]
		if pp == nil {
			pp = &procPeak{controller: p.controller}
			s.procs[p.pid] = pp
		}
		pp.rss, pp.cpu = max(pp.rss, peak), max(pp.cpu, cpu)
	}
}

// waitSidecars waits until n agent pods' sidecars were seen and returns
// them.
func (s *sparkplugSampler) waitSidecars(t *testing.T, n int) []argo.Sidecar {
	t.Helper()
	var out []argo.Sidecar
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		out = out[:0]
		for _, sc := range s.sidecars {
			out = append(out, sc)
		}
		return len(out) >= n, nil
	})
	if err != nil {
		t.Fatalf("%d agent pods' sidecars ran, want %d", len(out), n)
	}
	return out
}

// fill sets r's memory and CPU figures from the samples.
func (s *sparkplugSampler) fill(r *Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var agents int
	var agentCPU time.Duration
	for _, p := range s.procs {
		r.PeakRSS += p.rss
		r.CPU += p.cpu
		if p.controller {
			r.ControllerRSS = max(r.ControllerRSS, p.rss)
			continue
		}
		agents++
		agentCPU += p.cpu
		r.AgentRSS = max(r.AgentRSS, p.rss)
	}
	if agents > 0 {
		r.AgentCPU = agentCPU / time.Duration(agents)
	}
}

func (s *sparkplugSampler) stop() {
	s.once.Do(func() {
		s.cancel()
		<-s.done
		s.sample() // the last figures of those still running
	})
}

// poll sends count template.execute requests to the sidecar at addr, one
// at a time, round the workflow's Spark nodes, exactly as its agent sends
// them (the workflow's name, namespace and uid, and the node's template
// from the WorkflowTaskSet), and returns each one's latency. Every answer
// must be the acknowledgement: the nodes' results go into the TaskSet,
// not into replies.
func poll(t *testing.T, wf *wfv1.Workflow, addr string, count int) []time.Duration {
	t.Helper()
	ctx := context.Background()
	ts, err := env.Workflows.ArgoprojV1alpha1().WorkflowTaskSets(wf.Namespace).Get(ctx, wf.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the workflow's TaskSet: %v", err)
	}
	token, err := env.Sidecars.Token()
	if err != nil {
		t.Fatal(err)
	}
	bodies := make([][]byte, 0, len(ts.Spec.Tasks))
	for _, tmpl := range ts.Spec.Tasks {
		b, err := json.Marshal(executor.ExecuteTemplateArgs{
			Workflow: &executor.Workflow{ObjectMeta: executor.ObjectMeta{Name: wf.Name, Namespace: wf.Namespace, UID: string(wf.UID)}},
			Template: &tmpl,
		})
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	if len(bodies) == 0 {
		t.Fatal("the TaskSet has no tasks")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	url := "http://" + addr + "/api/v1/template.execute"
	lat := make([]time.Duration, 0, count)
	for i := range count {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("poll %d: %v", i, err)
		}
		var reply executor.ExecuteTemplateReply
		err = json.NewDecoder(resp.Body).Decode(&reply)
		resp.Body.Close()
		lat = append(lat, time.Since(start))
		if err != nil || resp.StatusCode != http.StatusOK || reply.Node == nil || reply.Node.Phase != "" || reply.Requeue == nil || reply.Requeue.Duration != 0 {
			t.Fatalf("poll %d: HTTP %d, %+v (%v); want the acknowledgement", i, resp.StatusCode, reply.Node, err)
		}
	}
	return lat
}

// machine describes this machine for docs/operations.md.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				mem = fmt.Sprintf(", %.0f GiB", kb/(1<<20))
			}
		}
	}
	return fmt.Sprintf("%d cores (%s)%s, %s/%s, %s; the whole control plane on the same machine, %s",
		runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH, time.Now().UTC().Format("2006-01-02"), env.Versions)
}
