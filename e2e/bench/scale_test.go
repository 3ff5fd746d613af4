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
// another in the same cluster, and writes the table and plots.
func TestScale(t *testing.T) {
	ns := []int{100, 500, 1000}
	if s := os.Getenv("SPARKPLUG_BENCH_N"); s != "" {
		ns = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				t.Fatalf("SPARKPLUG_BENCH_N=%q: want counts like 100,500,1000", s)
			}
			ns = append(ns, n)
		}
	}
	kinds := []string{KindSparkplug, KindPlain, KindOperator}
	if s := os.Getenv("SPARKPLUG_BENCH_KINDS"); s != "" {
		kinds = strings.Split(s, ",")
	}
	var results []Result
	for _, n := range ns {
		for _, kind := range kinds {
			var r Result
			switch kind {
			case KindSparkplug:
				r = runSparkplug(t, n)
			case KindPlain:
				r = runPlain(t, n)
			case KindOperator:
				r = runOperator(t, n)
			default:
				t.Fatalf("no launcher %q", kind)
			}
			t.Logf("%s, N=%d: first pod %v, all %v (%.0f/min), done %v, %.2f API requests per launch (own %.2f), peak RSS %.1f MiB, CPU %v, polls %d p50 %v p99 %v, %.3f API requests per poll",
				kind, n, r.First(), r.All(), r.PerMinute(), r.Done, r.APIRequests/float64(n), r.OwnRequests/float64(n),
				float64(r.PeakRSS)/(1<<20), r.CPU, len(r.Polls), Quantile(r.Polls, .5), Quantile(r.Polls, .99), r.PollRequests/float64(max(len(r.Polls), 1)))
			results = append(results, r)
		}
	}
	table := Table(results)
	fmt.Println(table)
	if os.Getenv("SPARKPLUG_BENCH_WRITE") == "" {
		t.Log("SPARKPLUG_BENCH_WRITE unset: README.md and docs/bench left as they are")
		return
	}
	dir := filepath.Join(env.RepoRoot, "docs", "bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var plots []string
	for _, n := range ns {
		rel := fmt.Sprintf("docs/bench/scale-%d.png", n)
		if err := Plot(filepath.Join(env.RepoRoot, rel), n, results); err != nil {
			t.Fatal(err)
		}
		plots = append(plots, rel)
	}
	if err := Rewrite(filepath.Join(env.RepoRoot, "README.md"), Section(machine(), results, plots)); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote README.md's How fast table and %s", strings.Join(plots, ", "))
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

// sparkWorkflow fans out n Spark steps, each with its own argument; the
// sidecar serves its profiles at pprofAddr.
func sparkWorkflow(run string, n int) string {
	ann, _ := json.Marshal(sim.Succeed(driverRun(n)).Annotations())
	return loopWorkflow("scale-spark-", n, fmt.Sprintf(`
  podMetadata:
    annotations: {%s: "--pprof-addr=%s"}`, framework.ServeArgsAnnotation, pprofAddr), fmt.Sprintf(`      plugin:
        spark:
          type: Scala
          mode: cluster
          image: spark:3.5.3
          sparkVersion: 3.5.3
          mainClass: org.apache.spark.examples.SparkPi
          mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
          arguments: ["{{inputs.parameters.i}}"]
          driver: {cores: 1, memory: 512m, serviceAccount: spark, labels: {%s: %s}, annotations: %s}
          executor: {cores: 1, memory: 512m}
          dynamicAllocation: {enabled: true, initialExecutors: 0, minExecutors: 0, maxExecutors: 2}
`, RunLabel, run, ann))
}

// pprofAddr is where the sidecar of a Spark run serves Go's profiles
// (one sidecar at a time runs here).
const pprofAddr = "127.0.0.1:6065"

// heapTop is the sidecar's live heap by function, from its profile.
func heapTop(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index=inuse_space", "http://"+pprofAddr+"/debug/pprof/heap").CombinedOutput()
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

func runSparkplug(t *testing.T, n int) Result {
	ctx := context.Background()
	run := runID("spark", n)
	w := newPodWatch(t, run)
	api0 := apiRequests(t)
	wfw0, tsw0 := writes(t)
	wf := submit(t, sparkWorkflow(run, n))
	r := Result{Kind: KindSparkplug, N: n}
	samp := sampleSidecar(ctx, wf)
	defer samp.stop()
	w.waitCreated(t, wf, n, 10*time.Minute)
	r.Created = w.created()
	r.APIRequests = apiRequests(t) - api0
	// The sidecar starts with the agent pod, after submission: all its
	// requests so far were this launch's (and its caches' first lists).
	sc := samp.sidecar(t)
	r.OwnRequests = sidecarRequests(t, sc.Addr)

	// Polls while the sidecar follows the n drivers, all running.
	w.waitRunning(t, wf, n, 5*time.Minute)
	before := sidecarRequests(t, sc.Addr)
	r.Polls = poll(t, wf, sc.Addr, max(2000, 2*n))
	r.PollRequests = sidecarRequests(t, sc.Addr) - before
	t.Logf("the sidecar's live heap, following %d drivers:\n%s", n, heapTop(t))

	done := waitWorkflow(t, wf, driverRun(n)+10*time.Minute)
	r.Done = done
	wfw, tsw := writes(t)
	r.WorkflowWrites, r.TaskSetWrites = wfw-wfw0, tsw-tsw0
	samp.stop()
	r.PeakRSS, r.CPU = samp.peak()
	cleanup(t, wf, run)
	return r
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

// cleanup deletes the workflow and its run's pods at once (the garbage
// collector would take minutes for 1,000) and waits until they are gone.
func cleanup(t *testing.T, wf *wfv1.Workflow, run string) {
	t.Helper()
	ctx := context.Background()
	policy := metav1.DeletePropagationBackground
	if wf != nil {
		_ = env.Workflows.ArgoprojV1alpha1().Workflows(wf.Namespace).Delete(ctx, wf.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
	}
	sel := metav1.ListOptions{LabelSelector: RunLabel + "=" + run}
	_ = env.Kube.CoreV1().Pods(env.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(ctx, sel)
		return err == nil && len(pods.Items) == 0, nil
	})
	if err != nil {
		t.Fatalf("the pods of run %s are not gone after 5m", run)
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
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("sidecar metrics: %v", err)
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

// sidecarSampler samples the workflow's sidecar's peak RSS and CPU time
// until stopped (the sidecar exits with its workflow).
type sidecarSampler struct {
	mu     sync.Mutex
	sc     *argo.Sidecar
	rss    int64
	cpu    time.Duration
	cancel context.CancelFunc
	done   chan struct{}
}

func sampleSidecar(ctx context.Context, wf *wfv1.Workflow) *sidecarSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &sidecarSampler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			if scs := env.Sidecars.Of(wf.Namespace, wf.Name); len(scs) > 0 && scs[0].Pid > 0 {
				sc := scs[0]
				peak, _, errM := framework.ProcMemory(sc.Pid)
				cpu, errC := framework.ProcCPU(sc.Pid)
				s.mu.Lock()
				s.sc = &sc
				if errM == nil && errC == nil {
					s.rss, s.cpu = max(s.rss, peak), max(s.cpu, cpu)
				}
				s.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// sidecar is the workflow's sidecar, once it runs.
func (s *sidecarSampler) sidecar(t *testing.T) argo.Sidecar {
	t.Helper()
	var sc *argo.Sidecar
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		sc = s.sc
		return sc != nil, nil
	})
	if err != nil {
		t.Fatal("the workflow's sidecar never ran")
	}
	return *sc
}

func (s *sidecarSampler) peak() (int64, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rss, s.cpu
}

func (s *sidecarSampler) stop() {
	s.cancel()
	<-s.done
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

// machine describes this machine for the README.
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
