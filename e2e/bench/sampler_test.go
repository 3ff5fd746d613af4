//go:build bench

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/framework"
)

// sparkplugSampler samples the peak RSS, the peak private (anonymous)
// memory and the CPU time of every sparkplug
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
	rss        int64 // VmHWM: the kernel's own peak
	private    int64 // the largest RssAnon sampled
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
		private, errP := framework.ProcPrivate(p.pid)
		cpu, errC := framework.ProcCPU(p.pid)
		if errM != nil || errP != nil || errC != nil {
			continue // exited meanwhile
		}
		pp := s.procs[p.pid]
		if pp == nil {
			pp = &procPeak{controller: p.controller}
			s.procs[p.pid] = pp
		}
		pp.rss, pp.private, pp.cpu = max(pp.rss, peak), max(pp.private, private), max(pp.cpu, cpu)
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
		r.PeakPrivate += p.private
		r.CPU += p.cpu
		if p.controller {
			r.ControllerRSS = max(r.ControllerRSS, p.rss)
			r.ControllerPrivate = max(r.ControllerPrivate, p.private)
			continue
		}
		agents++
		agentCPU += p.cpu
		r.AgentRSS = max(r.AgentRSS, p.rss)
		r.AgentPrivate = max(r.AgentPrivate, p.private)
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
