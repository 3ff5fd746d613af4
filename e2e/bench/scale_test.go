//go:build bench

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
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
	settings := []string{"defaults", "raised"}
	if s := os.Getenv("SPARKPLUG_BENCH_ARGO"); s != "" {
		settings = strings.Split(s, ",")
		for _, a := range settings {
			if _, ok := argoSettings[a]; !ok {
				t.Fatalf("SPARKPLUG_BENCH_ARGO: no setting %q (settings: defaults, raised)", a)
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
			current = "" // a new environment's controller runs with Argo's defaults
			for _, n := range ns {
				for _, run := range plan(mine, settings) {
					kind, flags := run.kind, argoSettings[run.setting]
					if skipped := kind == KindSidecarWF && n > maxAgents; !skipped {
						if err := setArgo(t, flags); err != nil {
							t.Fatal(err)
						}
					}
					start := time.Now()
					var r Result
					switch kind {
					case KindSparkplug, KindController:
						r = runLoop(t, kind, n)
					case KindPlain:
						r = runPlain(t, n)
					case KindSidecarWF:
						if n > maxAgents {
							r = Result{Kind: kind, N: n, Argo: flags, Skipped: fmt.Sprintf("%d agent pods, each an argoexec and a sparkplug sidecar process (about 40 MiB each), do not fit this machine (SPARKPLUG_BENCH_MAX_AGENTS=%d)", n, maxAgents)}
							break
						}
						r = runWorkflows(t, kind, n, false, flags)
					case KindControllerWF:
						r = runWorkflows(t, kind, n, n > maxAgents, flags)
					case KindPlainWF:
						r = runWorkflows(t, kind, n, false, flags)
					case KindOperator:
						r = runOperator(t, n)
					}
					r.Date = time.Now().UTC().Format("2006-01-02")
					if r.Skipped != "" {
						t.Logf("%s, N=%d: not run: %s", r.Label(), n, r.Skipped)
					} else {
						t.Logf("%s, N=%d (run took %v): first pod %v, all %v (%.0f/min), done %v, %.2f API requests per launch (sparkplug's own %.2f), sparkplug's processes: peak RSS %.1f MiB summed, %.1f MiB private (controller replica %.1f/%.1f MiB, agent pod %.1f/%.1f MiB), CPU %v summed (agent pod %v), polls %d p50 %v p99 %v, %.3f API requests per poll, %.2f Workflow writes and %.2f TaskSet status patches per node, TaskSet to driver p50 %v max %v",
							r.Label(), n, time.Since(start).Round(time.Second), r.First(), r.All(), r.PerMinute(), r.Done, r.APIRequests/float64(n), r.OwnRequests/float64(n),
							float64(r.PeakRSS)/(1<<20), float64(r.PeakPrivate)/(1<<20), float64(r.ControllerRSS)/(1<<20), float64(r.ControllerPrivate)/(1<<20),
							float64(r.AgentRSS)/(1<<20), float64(r.AgentPrivate)/(1<<20), r.CPU, r.AgentCPU,
							len(r.Polls), Quantile(r.Polls, .5), Quantile(r.Polls, .99), r.PollRequests/float64(max(len(r.Polls), 1)),
							r.WorkflowWrites/float64(n), r.TaskSetWrites/float64(n), Quantile(r.ToDriver, .5), Quantile(r.ToDriver, 1))
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

// argoSettings are the workflow-controller's flags beyond its defaults
// for each setting the one-step workflows run with: Argo's own, and its
// client limits raised as Argo's scaling guide (docs/scaling.md, "K8S API
// Client Side Rate Limiting") shows them, the values docs/install.md
// advises for a cluster running many Spark workflows.
var argoSettings = map[string]string{
	"defaults": "",
	"raised":   "--qps=50 --burst=75",
}

// oneRun is a launcher and the Argo setting it runs with.
type oneRun struct{ kind, setting string }

// plan is the runs of one N: each launcher at Argo's defaults, then the
// one-step-workflow launchers again at each other setting (the loop is
// one workflow, and the operator uses no Argo: Argo's client limit is not
// what bounds them, so they run once).
func plan(kinds, settings []string) []oneRun {
	var runs []oneRun
	for _, setting := range settings {
		for _, k := range kinds {
			if setting == "defaults" || dashed[k] {
				runs = append(runs, oneRun{k, setting})
			}
		}
	}
	return runs
}

// current is the flags the workflow-controller runs with now.
var current string

// setArgo restarts the workflow-controller with flags (beyond its
// defaults) unless it runs with them already.
func setArgo(t *testing.T, flags string) error {
	if flags == current {
		return nil
	}
	t.Logf("restarting Argo's workflow-controller with %q", flags)
	if err := env.RestartControllerWith(context.Background(), strings.Fields(flags)...); err != nil {
		return err
	}
	current = flags
	return nil
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
