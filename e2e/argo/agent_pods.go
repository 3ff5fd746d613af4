package argo

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

func (r *podRun) stop() {
	r.cancel()
	<-r.done
}

func (r *podRun) sidecarCrashes() []string {
	var out []string
	for _, sc := range r.sidecars {
		for _, err := range sc.crashed() {
			out = append(out, fmt.Sprintf("sidecar %s of %s: %v (log %s)", sc.name, r.pod, err, sc.log))
		}
	}
	return out
}

// KillAgent kills the running agent of the workflow's agent pod with
// SIGKILL, as if its container crashed; kubelet's part restarts it.
func (a *Agents) KillAgent(namespace, pod string) error {
	run := a.podRun(namespace + "/" + pod)
	if run == nil {
		return fmt.Errorf("%w for pod %s/%s", ErrNoAgent, namespace, pod)
	}
	return run.main.kill()
}

// KillSidecar kills a running sidecar of an agent pod with SIGKILL, as if
// it crashed or was OOM-killed; kubelet's part starts it again at once.
func (a *Agents) KillSidecar(namespace, pod, name string) error {
	run := a.podRun(namespace + "/" + pod)
	if run == nil {
		return fmt.Errorf("%w for pod %s/%s", ErrNoAgent, namespace, pod)
	}
	for _, sc := range run.sidecars {
		if sc.name == name {
			return sc.kill()
		}
	}
	return fmt.Errorf("agent pod %s/%s has no sidecar %s", namespace, pod, name)
}

// Sidecars lists the played sidecars of the live agent pods of a
// workflow ("" for every workflow's).
func (a *Agents) Sidecars(namespace, workflow string) []Sidecar {
	a.mu.Lock()
	var runs []*podRun
	for _, r := range a.agents {
		if strings.HasPrefix(r.pod, namespace+"/") && (workflow == "" || r.workflow == workflow) {
			runs = append(runs, r)
		}
	}
	a.mu.Unlock()
	var out []Sidecar
	for _, r := range runs {
		for _, sc := range r.sidecars {
			s := Sidecar{Pod: r.pod, Workflow: r.workflow, Container: sc.name, Addr: sc.addr}
			sc.mu.Lock()
			s.Starts = sc.starts
			if sc.proc != nil {
				s.Pid = sc.proc.Pid()
			}
			sc.mu.Unlock()
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod+out[i].Container < out[j].Pod+out[j].Container })
	return out
}

// Crashes lists every exit of a played sidecar that nobody asked for (a
// panic, a fatal error), of pods live or gone.
func (a *Agents) Crashes() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := append([]string(nil), a.crashes...)
	for _, r := range a.agents {
		out = append(out, r.sidecarCrashes()...)
	}
	return out
}

func (a *Agents) podRun(key string) *podRun {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.agents {
		if r.pod == key {
			return r
		}
	}
	return nil
}

// Logs returns the log files of every agent started so far.
func (a *Agents) Logs() []string {
	paths, _ := filepath.Glob(filepath.Join(a.c.LogDir(), "agent-*.log"))
	return paths
}

// SidecarLogs returns the log files of every sidecar of a workflow's
// agent pods started so far, live or gone.
func (a *Agents) SidecarLogs(workflow string) []string {
	pattern := "sidecar-*.log"
	if workflow != "" {
		pattern = "sidecar-" + workflow + "-*.log"
	}
	paths, _ := filepath.Glob(filepath.Join(a.c.LogDir(), pattern))
	return paths
}
