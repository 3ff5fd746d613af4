package bench

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(100-i) * time.Millisecond // unsorted
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{.5, 50 * time.Millisecond}, {.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := Quantile(ds, c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := Quantile(nil, .5); got != 0 {
		t.Errorf("Quantile of none = %v", got)
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("Quantile sorted its argument")
	}
}

func results() []Result {
	pods := func(step time.Duration, n int) []time.Duration {
		d := make([]time.Duration, n)
		for i := range d {
			d[i] = time.Duration(i+1) * step
		}
		return d
	}
	return []Result{
		{Kind: KindOperator, N: 4, Created: pods(10*time.Second, 4), Done: 60 * time.Second, APIRequests: 80, OwnRequests: -1, WorkflowWrites: -1, TaskSetWrites: -1},
		{Kind: KindSparkplug, N: 4, Date: "2026-11-26", Created: pods(time.Second, 4), Done: 9 * time.Second, APIRequests: 40, OwnRequests: 12,
			PeakRSS: 40 << 20, CPU: 1500 * time.Millisecond, AgentRSS: 40 << 20, AgentCPU: 1500 * time.Millisecond,
			Polls: []time.Duration{time.Millisecond, 3 * time.Millisecond}, PollRequests: 0, WorkflowWrites: 30, TaskSetWrites: 6},
		{Kind: KindPlain, N: 4, Created: pods(2*time.Second, 4), APIRequests: 20, OwnRequests: -1, WorkflowWrites: -1, TaskSetWrites: -1},
		{Kind: KindControllerWF, N: 4, Date: "2026-11-27", Created: pods(500*time.Millisecond, 4), Done: 8 * time.Second, APIRequests: 60, OwnRequests: 8,
			TaskSetsAll: 1500 * time.Millisecond, PeakRSS: 100 << 20, CPU: 3 * time.Second, ControllerRSS: 50 << 20, AgentRSS: 7 << 20, AgentCPU: 100 * time.Millisecond, WorkflowWrites: 20, TaskSetWrites: 4},
		{Kind: KindPlainWF, N: 4, Created: pods(4*time.Second, 4), APIRequests: 24, OwnRequests: -1, WorkflowWrites: -1, TaskSetWrites: -1},
		{Kind: KindSidecarWF, N: 1000, Skipped: "too many agents"},
	}
}

func TestTable(t *testing.T) {
	rs := results()
	if got := Ratio(rs[1], rs[2]); got != 2 {
		t.Errorf("ratio to plain = %v, want 2", got)
	}
	table := Table(rs)
	for _, want := range []string{
		"| 4 | sparkplug | 1.0 s | 4.0 s | 60 | 9.0 s | 10.0 | 3.00 | 40.0 MiB | 1.5 s | – | 40.0 MiB | 1.5 s | 1.00 ms | 3.00 ms | 0.000 |",
		"| 4 | plain | 2.0 s | 8.0 s | 30 | – | 5.0 | – | – | – | – | – | – | – | – | – |",
		"| 4 | controller-wf | 0.5 s | 2.0 s | 120 | 8.0 s | 15.0 | 2.00 | 100.0 MiB | 3.0 s | 50.0 MiB | 7.0 MiB | 0.1 s | – | – | – |",
		"| 1000 | sidecar-wf | not run: too many agents |",
		// Each Spark launcher against its own Argo counterpart and the
		// operator.
		"| 4 | sparkplug | – | 2.00 (plain) | 10.0 |",
		"| 4 | controller-wf | 1.5 s | 8.00 (plain-wf) | 20.0 |",
		"| 4 | sparkplug | 1.50 | – | 7.50 |",
		"| 4 | controller-wf | 1.00 | – | 5.00 |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	// By N, then the launchers' order: the loop first, the operator last.
	if i, j, k := strings.Index(table, "| 4 | sparkplug |"), strings.Index(table, "| 4 | controller-wf |"), strings.Index(table, "| 4 | operator |"); !(i < j && j < k) {
		t.Errorf("rows out of order:\n%s", table)
	}
	if strings.Contains(table, "| 1000 | sidecar-wf | –") {
		t.Errorf("a launcher not run has a ratio row:\n%s", table)
	}
}

func TestMerge(t *testing.T) {
	old := results()
	newer := []Result{{Kind: KindPlain, N: 4, APIRequests: 99}, {Kind: KindPlain, N: 8, APIRequests: 1}}
	got := Merge(old, newer)
	if len(got) != len(old)+1 {
		t.Fatalf("merged %d results, want %d: %+v", len(got), len(old)+1, got)
	}
	if r, _ := find(got, KindPlain, 4, ""); r.APIRequests != 99 {
		t.Errorf("plain N=4 kept the old figures: %+v", r)
	}
	if _, ok := find(got, KindOperator, 4, ""); !ok {
		t.Error("a result the new run did not measure was dropped")
	}
	if got[0].Kind != KindSparkplug || got[len(got)-2].N != 8 || got[len(got)-1].N != 1000 {
		t.Errorf("merged results not sorted by N: %+v", got)
	}
	if len(old) != len(results()) || old[2].APIRequests != 20 {
		t.Error("Merge changed its argument")
	}

	path := filepath.Join(t.TempDir(), "scale.json")
	if rs, err := Load(path); err != nil || rs != nil {
		t.Errorf("Load of no file = %v, %v", rs, err)
	}
	if err := Save(path, got); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(got) || back[0].Created[3] != got[0].Created[3] || back[0].Date != got[0].Date {
		t.Errorf("Load(Save(x)) = %+v, want %+v", back, got)
	}
}

func TestGoals(t *testing.T) {
	rs := results()
	if g := Goals(rs); g != "" {
		t.Errorf("goals without N=1000 = %q", g)
	}
	for i := range rs {
		rs[i].N = 1000
	}
	g := Goals(rs)
	for _, want := range []string{
		"- sparkplug: all 1,000 drivers of one workflow at least 3.0 times as fast as Argo's own 1,000 pods: **not met** (2.00x: 4.0 s against 8.0 s)",
		"128 MiB resident following 1,000 drivers across 1,000 workflows: met (the leading replica peaked at 50.0 MiB)",
		"one-container-step workflows: met (2.0 s against 16.0 s; Argo had created the Spark workflows' TaskSets, which sparkplug waits for, at 1.5 s)",
		"faster than the operator in the same run: met (20.0x",
	} {
		if !strings.Contains(g, want) {
			t.Errorf("goals lack %q:\n%s", want, g)
		}
	}
	rs[3].ControllerRSS = 129 << 20
	rs[3].Created = []time.Duration{time.Second, 20 * time.Second}
	g = Goals(rs)
	if strings.Count(g, "**not met**") != 4 {
		t.Errorf("want all four goals not met:\n%s", g)
	}
}

// Argo's raised client limits are runs of their own, compared with Argo's
// own workflows at the same limits; the writes table says how many more
// Workflow writes a node cost than Argo's own, and how long from a
// TaskSet to its driver.
func TestArgoSettingsAndWrites(t *testing.T) {
	const raised = "--qps=50 --burst=75"
	secs := func(ss ...int) []time.Duration {
		d := make([]time.Duration, len(ss))
		for i, s := range ss {
			d[i] = time.Duration(s) * time.Second
		}
		return d
	}
	rs := []Result{
		{Kind: KindControllerWF, N: 4, Created: secs(1, 2, 3, 8), Done: 20 * time.Second, OwnRequests: 8, WorkflowWrites: 14, TaskSetWrites: 12, OwnResults: 10,
			ToDriver: secs(1, 1, 2, 6), PeakRSS: 200 << 20, PeakPrivate: 150 << 20, ControllerRSS: 120 << 20, ControllerPrivate: 70 << 20},
		{Kind: KindControllerWF, N: 4, Argo: raised, Created: secs(1, 1, 2, 4), Done: 15 * time.Second, OwnRequests: 8, WorkflowWrites: 13, TaskSetWrites: 12, ToDriver: secs(1, 1, 1, 2)},
		{Kind: KindPlainWF, N: 4, Created: secs(1, 2, 3, 4), Done: 10 * time.Second, OwnRequests: -1, WorkflowWrites: 12, TaskSetWrites: -1},
		{Kind: KindPlainWF, N: 4, Argo: raised, Created: secs(1, 1, 1, 2), Done: 8 * time.Second, OwnRequests: -1, WorkflowWrites: 8, TaskSetWrites: -1},
		{Kind: KindSidecarWF, N: 4, Created: secs(1, 2, 3, 4), Done: 20 * time.Second, OwnRequests: 20, WorkflowWrites: 20, TaskSetWrites: 12,
			PeakRSS: 240 << 20, PeakPrivate: 48 << 20, AgentRSS: 60 << 20, AgentPrivate: 12 << 20},
	}
	table := Table(rs)
	for _, want := range []string{
		"| 4 | controller-wf | 1.0 s | 8.0 s | 30 | 20.0 s | 0.0 | 2.00 | 200.0 MiB (150.0 private) | 0.0 s | 120.0 MiB (70.0 private) |",
		"| 4 | controller-wf, Argo --qps=50 --burst=75 | 1.0 s | 4.0 s |",
		// Each against Argo's own at the same limits.
		"| 4 | controller-wf | – | 0.50 (plain-wf) | – |",
		"| 4 | controller-wf, Argo --qps=50 --burst=75 | – | 0.50 (plain-wf) | – |",
		"| 4 | controller-wf | 3.00 | 2.50 | 3.50 | +0.50 (plain-wf) | 1.0 s | 6.0 s | 6.0 s |",
		"| 4 | controller-wf, Argo --qps=50 --burst=75 | 3.00 | – | 3.25 | +1.25 (plain-wf) | 1.0 s | 2.0 s | 2.0 s |",
		"| 4 | plain-wf | – | – | 3.00 | – | – | – | – |",
		"| 4 | sidecar-wf | 3.00 | – | 5.00 | +2.00 (plain-wf) | – | – | – |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	// Argo's defaults first, then its raised limits.
	if i, j := strings.Index(table, "| 4 | controller-wf | 1.0 s"), strings.Index(table, "| 4 | controller-wf, Argo"); i < 0 || j < i {
		t.Errorf("rows out of order:\n%s", table)
	}
	g := Goals(rs)
	for _, want := range []string{
		"- A sidecar following one driver at most 24 MiB resident (N=4): **not met** (the largest peaked at 60.0 MiB (12.0 private))",
		"- sidecar-wf, N=4: Argo's Workflow writes per node at most plain-wf's plus one: **not met** (5.00 against 3.00)",
		"- controller-wf, N=4: Argo's Workflow writes per node at most plain-wf's plus one: met (3.50 against 3.00)",
	} {
		if !strings.Contains(g, want) {
			t.Errorf("goals lack %q:\n%s", want, g)
		}
	}
	if strings.Contains(g, "1.25") || strings.Contains(g, "3.25") {
		t.Errorf("a goal judged at Argo's raised limits:\n%s", g)
	}
	// A run at raised limits replaces only its own figures.
	got := Merge(rs, []Result{{Kind: KindPlainWF, N: 4, Argo: raised, WorkflowWrites: 9}})
	if r, _ := find(got, KindPlainWF, 4, raised); r.WorkflowWrites != 9 {
		t.Errorf("raised plain-wf kept its old figures: %+v", r)
	}
	if r, _ := find(got, KindPlainWF, 4, ""); r.WorkflowWrites != 12 || len(got) != len(rs) {
		t.Errorf("the run at raised limits replaced Argo's defaults' figures: %+v", got)
	}
}

func TestPlotAndRewrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "scale-4.png")
	if err := Plot(path, 4, results()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the plot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 300 {
		t.Errorf("plot is %v, want a readable size", b)
	}

	readme := filepath.Join(dir, "operations.md")
	if err := os.WriteFile(readme, []byte("# x\n\nbefore\n"+BeginMarker+"\nold\n"+EndMarker+"\nafter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Rewrite(readme, Section("a machine", results(), []string{"bench/scale-4.png"})); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(readme)
	got := string(b)
	for _, want := range []string{
		"before\n" + BeginMarker + "\nMeasured by `make bench-e2e` on a machine; N=4 on 2026-11-26, 2026-11-27.\n",
		"- `controller-wf`: controller mode: N workflows, 1 Spark step each\n",
		"![scale-4](bench/scale-4.png)\n" + EndMarker + "\nafter\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten operations.md lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "old") {
		t.Errorf("the old block stayed:\n%s", got)
	}
	if err := Rewrite(filepath.Join(dir, "scale-4.png"), "x"); err == nil {
		t.Error("Rewrite of a file without the markers succeeded")
	}
}
