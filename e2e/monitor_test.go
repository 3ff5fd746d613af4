//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// monitorProc is sparkplug monitor run as manifests/monitor deploys it:
// its own ServiceAccount and Role (manifests/monitor/rbac.yaml), leader
// election through a Lease in its namespace.
type monitorProc struct {
	p       *cluster.Process
	metrics string
}

// installMonitorRBAC applies manifests/monitor/rbac.yaml into ns, as
// kubectl apply -k manifests/monitor -n ns would (the Deployment aside: the
// test runs the binary itself), and returns a kubeconfig of its
// ServiceAccount.
func installMonitorRBAC(t *testing.T, ns string) string {
	t.Helper()
	ctx := context.Background()
	raw, err := os.ReadFile(filepath.Join(env.RepoRoot, "manifests", "monitor", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, d := range strings.Split(string(raw), "\n---") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(d), &obj); err != nil || obj == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetNamespace(ns)
		if subjects, ok := obj["subjects"].([]any); ok {
			for _, s := range subjects {
				s.(map[string]any)["namespace"] = ns
			}
		}
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	if err := env.Cluster.Apply(ctx, []byte(strings.Join(docs, "\n---\n"))); err != nil {
		t.Fatalf("apply manifests/monitor/rbac.yaml: %v", err)
	}
	path := filepath.Join(t.TempDir(), "monitor.kubeconfig")
	if err := env.Cluster.WriteServiceAccountKubeconfig(ctx, ns, "sparkplug-monitor", path); err != nil {
		t.Fatal(err)
	}
	return path
}

func startMonitor(t *testing.T, name, kubeconfig, ns string) *monitorProc {
	t.Helper()
	mport, hport := freePort(t), freePort(t)
	p, err := env.Cluster.StartProcess(name, env.Sidecars.Binary(), []string{"monitor",
		"--kubeconfig", kubeconfig, "--namespaces", ns, "--leader-election-namespace", ns,
		fmt.Sprintf("--metrics-addr=127.0.0.1:%d", mport), fmt.Sprintf("--health-addr=127.0.0.1:%d", hport),
		"--ttl-interval=1s", "--log-format=text"}, nil, "")
	if err != nil {
		t.Fatalf("start sparkplug monitor: %v", err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	m := &monitorProc{p: p, metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", mport)}
	// Leading: the Lease is its (nobody else holds it here once a killed
	// one's lease ran out).
	m.waitFor(t, "to lead", 90*time.Second, func(s samples) bool { return s.sum("sparkplug_monitor_leader") == 1 })
	return m
}

// samples are a scrape: metric name and labels as written, to value.
type samples map[string]float64

// sum adds every series of a family, whatever its labels.
func (s samples) sum(family string) float64 {
	var v float64
	for k, x := range s {
		if k == family || strings.HasPrefix(k, family+"{") {
			v += x
		}
	}
	return v
}

func (m *monitorProc) scrape() (samples, error) {
	resp, err := http.Get(m.metrics)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", m.metrics, resp.Status)
	}
	out := samples{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

func (m *monitorProc) waitFor(t *testing.T, what string, timeout time.Duration, ok func(samples) bool) samples {
	t.Helper()
	var last samples
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		s, err := m.scrape()
		if err != nil {
			return false, nil
		}
		last = s
		return ok(s), nil
	})
	if err != nil {
		var spark []string
		for k, v := range last {
			if strings.HasPrefix(k, "spark") {
				spark = append(spark, fmt.Sprintf("%s %g", k, v))
			}
		}
		t.Fatalf("sparkplug monitor never came %s in %s; last scrape:\n%s\nits log:\n%s", what, timeout, strings.Join(spark, "\n"), m.p.LogTail(30))
	}
	return last
}

// sparkplug monitor counts what the Spark operator counts, from the
// drivers and executors in the cluster: submissions, successes, failures,
// running applications and executors. Killed and started again, its
// running gauges come back from the cluster. The counts are of the whole
// namespace, so the test has one of its own (sparkplug installed there as
// the README installs it), where no other test's drivers move them.
func TestMonitorCountsSparkStepsAndComesBackAfterAKill(t *testing.T) {
	onceAcrossModes(t, "sparkplug monitor, a process of its own")
	parallel(t)
	const ns = "monitored"
	kubectlAs(t, confined(t, "monitored-admin", ns), "apply", "-k", "manifests/", "-n", ns)
	if err := env.PrepareJobNamespace(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	kubeconfig := installMonitorRBAC(t, ns)
	m := startMonitor(t, "monitor-1", kubeconfig, ns)
	// The counts of what is in the namespace already, once they stop
	// moving (the initial list is counted as the operator counts it).
	var prev samples
	before := m.waitFor(t, "settled", 30*time.Second, func(s samples) bool {
		same := prev != nil && s.sum("spark_application_submit_count") == prev.sum("spark_application_submit_count") &&
			s.sum("spark_application_success_count") == prev.sum("spark_application_success_count")
		prev = s
		time.Sleep(time.Second)
		return same
	})
	base := func(f string) float64 { return before.sum(f) }

	Given(t).Namespace(ns).Workflow("@examples/spark-pi.yaml").Simulate(sim.Succeed(time.Second)).
		When().SubmitWorkflow().WaitForWorkflow(framework.ToBeSucceeded)
	Given(t).Namespace(ns).Workflow("@examples/spark-pi.yaml").Simulate(sim.Fail(time.Second, 1, "boom")).
		When().SubmitWorkflow().WaitForWorkflow(framework.ToBeFailed)
	s := m.waitFor(t, "to count one success and one failure", 60*time.Second, func(s samples) bool {
		return s.sum("spark_application_success_count") == base("spark_application_success_count")+1 &&
			s.sum("spark_application_failure_count") >= base("spark_application_failure_count")+1
	})
	// spark-pi.yaml retries a failure (restartPolicy OnFailure): every
	// attempt's driver is a submission and, failing, a failure.
	failed := s.sum("spark_application_failure_count") - base("spark_application_failure_count")
	if got, want := s.sum("spark_application_submit_count")-base("spark_application_submit_count"), 1+failed; got != want {
		t.Errorf("spark_application_submit_count grew by %g, want %g (one per driver: 1 success, %g failed attempts)", got, want, failed)
	}
	if got := s.sum("spark_application_count") - base("spark_application_count"); got != 2 {
		t.Errorf("spark_application_count grew by %g, want 2 (two applications, whatever their attempts)", got)
	}
	if s.sum("spark_application_success_execution_time_seconds_count") < 1 || s.sum("spark_application_start_latency_seconds_count") < 2 {
		t.Errorf("execution time and start latency were not observed: %v", s)
	}

	// A driver that runs: 1 application and 2 executors running.
	running := Given(t).Namespace(ns).Workflow("@examples/spark-pi.yaml").Simulate(sim.Succeed(5*time.Minute)).
		When().SubmitWorkflow().WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING 2/2 executors`))
	defer running.Terminate()
	m.waitFor(t, "to count 1 running application and 2 running executors", 60*time.Second, func(s samples) bool {
		return s.sum("spark_application_running_count") == 1 && s.sum("spark_executor_running_count") == 2
	})

	// Killed (as an OOM kill would), then started again: the gauges come
	// back from the cluster, not from memory.
	if err := m.p.Kill(); err != nil {
		t.Fatal(err)
	}
	m2 := startMonitor(t, "monitor-2", kubeconfig, ns)
	s2 := m2.waitFor(t, "back with 1 running application and 2 running executors", 60*time.Second, func(s samples) bool {
		return s.sum("spark_application_running_count") == 1 && s.sum("spark_executor_running_count") == 2
	})
	if s2.sum("sparkplug_build_info") != 1 {
		t.Errorf("sparkplug_build_info = %g, want 1", s2.sum("sparkplug_build_info"))
	}
}
