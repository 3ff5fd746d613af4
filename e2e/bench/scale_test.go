//go:build bench

package bench

import (
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
