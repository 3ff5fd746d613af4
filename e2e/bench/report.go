package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// The launchers compared. Two scenarios: N Spark steps in one
// workflow's loop (sidecar, controller, against plain), and N workflows
// of one step each, submitted together as a CronWorkflow's runs would be
// (sidecar-wf, controller-wf, against plain-wf); the operator's N
// SparkApplications stand beside both.
const (
	// KindSparkplug is the loop in sidecar mode (its name from before
	// controller mode).
	KindSparkplug    = "sparkplug"
	KindController   = "controller"
	KindPlain        = "plain"
	KindOperator     = "operator"
	KindSidecarWF    = "sidecar-wf"
	KindControllerWF = "controller-wf"
	KindPlainWF      = "plain-wf"
)

// Kinds are every launcher, in the order of the tables.
var Kinds = []string{KindSparkplug, KindController, KindPlain, KindSidecarWF, KindControllerWF, KindPlainWF, KindOperator}

// describe says what a launcher's row is.
var describe = map[string]string{
	KindSparkplug:    "sidecar mode: 1 workflow, N Spark steps",
	KindController:   "controller mode: 1 workflow, N Spark steps",
	KindPlain:        "Argo: 1 workflow, N container steps",
	KindSidecarWF:    "sidecar mode: N workflows, 1 Spark step each",
	KindControllerWF: "controller mode: N workflows, 1 Spark step each",
	KindPlainWF:      "Argo: N workflows, 1 container step each",
	KindOperator:     "Spark operator v2.5.2: N SparkApplications (fake spark-submit: its best case)",
}

// counterpart is the Argo launcher a Spark launcher is compared with.
var counterpart = map[string]string{
	KindSparkplug: KindPlain, KindController: KindPlain,
	KindSidecarWF: KindPlainWF, KindControllerWF: KindPlainWF,
}

// Result is one launcher's run of N steps.
type Result struct {
	Kind string
	N    int
	// Date is the day of the run (UTC, 2006-01-02).
	Date string `json:",omitempty"`
	// Skipped says why the launcher was not run at this N ("": it ran).
	Skipped string `json:",omitempty"`
	// Created is when each driver pod (pod) was first seen, since the
	// submission, sorted.
	Created []time.Duration
	// TaskSetsAll is when Argo had created the WorkflowTaskSets of all N
	// one-step workflows, since the submission (0: not measured): what it
	// hands sparkplug, before sparkplug can launch.
	TaskSetsAll time.Duration `json:",omitempty"`
	// Done is when every node was done (0: not measured).
	Done time.Duration
	// APIRequests are the kube-apiserver's requests (all clients, watches
	// not counted) from the submission until every pod was created.
	APIRequests float64
	// OwnRequests are sparkplug's own in that time (the sidecars', or the
	// controller replicas'; -1: not measured).
	OwnRequests float64
	// Argo is the flags the workflow-controller ran with beyond its
	// defaults ("": Argo's defaults), e.g. its client limits raised.
	Argo string `json:",omitempty"`
	// PeakRSS is the sum of the peak resident sets (bytes) of every
	// sparkplug process of the run (the sidecars, or the controller's
	// replicas and the acknowledgers), CPU the sum of their CPU time; 0:
	// none. PeakPrivate is the sum of their peak private (anonymous)
	// memory: a resident set is that and the pages of the binary, which
	// every process of the same binary shares (0: not measured).
	PeakRSS     int64
	PeakPrivate int64 `json:",omitempty"`
	CPU         time.Duration
	// ControllerRSS is the largest peak resident set of a controller
	// replica (controller mode; 0: none), ControllerPrivate the largest
	// peak private memory of one.
	ControllerRSS     int64 `json:",omitempty"`
	ControllerPrivate int64 `json:",omitempty"`
	// AgentRSS is the largest peak resident set of an agent pod's
	// sparkplug process (the sidecar, or the acknowledger), AgentPrivate
	// the largest peak private memory of one, AgentCPU their mean CPU
	// time; 0: none played.
	AgentRSS     int64         `json:",omitempty"`
	AgentPrivate int64         `json:",omitempty"`
	AgentCPU     time.Duration `json:",omitempty"`
	// ToDriver is, for each one-step Spark workflow, the time from Argo's
	// creation of its WorkflowTaskSet (when sparkplug can first see the
	// step) to its driver pod's, sorted.
	ToDriver []time.Duration `json:",omitempty"`
	// Unplayed: the agent pods were left unplayed (controller mode needs
	// none to run a Spark step): no argoexec and no acknowledger ran, so
	// their cost is not in PeakRSS and CPU.
	Unplayed bool `json:",omitempty"`
	// Polls are the latencies of status polls sent to the sidecar while it
	// followed the N drivers, PollRequests the API requests it made
	// meanwhile.
	Polls        []time.Duration `json:",omitempty"`
	PollRequests float64         `json:",omitempty"`
	// WorkflowWrites are the Workflow updates and patches (all clients:
	// the controller's) and TaskSetWrites the WorkflowTaskSet status
	// patches (sparkplug's results) from the submission until every
	// node was done (-1: not measured).
	WorkflowWrites, TaskSetWrites float64
	// OwnResults are the node results sparkplug wrote in that time, by
	// its own count (sparkplug_node_results_written_total: controller
	// mode; 0 or less: not measured). The TaskSet status patches also
	// hold Argo's own, which removes each fulfilled node's result.
	OwnResults float64 `json:",omitempty"`
}

// First is when the first pod was created; All when the last was.
func (r Result) First() time.Duration { return at(r.Created, 0) }
func (r Result) All() time.Duration   { return at(r.Created, len(r.Created)-1) }

func at(d []time.Duration, i int) time.Duration {
	if i < 0 || i >= len(d) {
		return 0
	}
	return d[i]
}

// PerMinute is the launch rate: N pods over the time to all of them.
func (r Result) PerMinute() float64 {
	if r.All() <= 0 {
		return 0
	}
	return float64(len(r.Created)) / r.All().Minutes()
}

// Quantile is the q-quantile (0..1) of ds by the nearest-rank method; 0
// for none.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(q*float64(len(s)) + 0.999999999)
	return s[min(max(rank, 1), len(s))-1]
}

// Ratio is how many times faster a launched all its pods than b: b's time
// to all over a's.
func Ratio(a, b Result) float64 {
	if a.All() <= 0 {
		return 0
	}
	return b.All().Seconds() / a.All().Seconds()
}

// Label names r's launcher in the tables: its kind, and Argo's flags
// where they are not its defaults.
func (r Result) Label() string {
	if r.Argo == "" {
		return r.Kind
	}
	return r.Kind + ", Argo " + r.Argo
}

// Table is the results as Markdown tables: one row per N and launcher,
// then the launch rates of the Spark launchers over Argo's and the
// operator's per N, then the writes and the time from TaskSet to driver.
func Table(results []Result) string {
	results = Sorted(results)
	var b strings.Builder
	b.WriteString("| N | launcher | first pod | all pods | pods/min | all done | API requests per launch: all clients | sparkplug's own | sparkplug's processes: peak RSS, summed | CPU, summed | controller replica: peak RSS | agent pod's sparkplug: peak RSS | CPU | poll p50 | poll p99 | API requests per poll |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		if r.Skipped != "" {
			fmt.Fprintf(&b, "| %d | %s | not run: %s |||||||||||||||\n", r.N, r.Label(), r.Skipped)
			continue
		}
		sum := orDash(r.PeakRSS > 0, withPrivate(r.PeakRSS, r.PeakPrivate))
		if r.Unplayed && r.PeakRSS > 0 {
			sum += " (controller only: agents unplayed)"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %.0f | %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.N, r.Label(), secs(r.First()), secs(r.All()), r.PerMinute(), orDash(r.Done > 0, secs(r.Done)),
			r.APIRequests/float64(r.N), orDash(r.OwnRequests >= 0, fmt.Sprintf("%.2f", r.OwnRequests/float64(r.N))),
			sum, orDash(r.PeakRSS > 0, secs(r.CPU)),
			orDash(r.ControllerRSS > 0, withPrivate(r.ControllerRSS, r.ControllerPrivate)),
			orDash(r.AgentRSS > 0, withPrivate(r.AgentRSS, r.AgentPrivate)), orDash(r.AgentRSS > 0, secs(r.AgentCPU)),
			orDash(len(r.Polls) > 0, ms(Quantile(r.Polls, .5))), orDash(len(r.Polls) > 0, ms(Quantile(r.Polls, .99))),
			orDash(len(r.Polls) > 0, fmt.Sprintf("%.3f", r.PollRequests/float64(len(r.Polls)))))
	}
	var ratios strings.Builder
	for _, sp := range results {
		if _, spark := counterpart[sp.Kind]; !spark || sp.Skipped != "" {
			continue
		}
		plain, okP := find(results, counterpart[sp.Kind], sp.N, sp.Argo)
		op, okO := find(results, KindOperator, sp.N, "")
		okP = okP && plain.Skipped == ""
		okO = okO && op.Skipped == ""
		fmt.Fprintf(&ratios, "| %d | %s | %s | %s | %s |\n", sp.N, sp.Label(), orDash(sp.TaskSetsAll > 0, secs(sp.TaskSetsAll)), orDash(okP, fmt.Sprintf("%.2f (%s)", Ratio(sp, plain), counterpart[sp.Kind])), orDash(okO, fmt.Sprintf("%.1f", Ratio(sp, op))))
	}
	if ratios.Len() > 0 {
		b.WriteString("\n| N | launcher | Argo's TaskSets, all created | launch rate (all pods) over Argo's | over the operator's |\n|---:|---|---:|---:|---:|\n")
		b.WriteString(ratios.String())
	}
	var writes strings.Builder
	for _, r := range results {
		_, spark := counterpart[r.Kind]
		if (!spark && r.Kind != KindPlainWF) || r.Skipped != "" || r.WorkflowWrites < 0 || r.Done <= 0 {
			continue
		}
		over := "–"
		if plain, ok := find(results, counterpart[r.Kind], r.N, r.Argo); ok && spark && plain.Skipped == "" && plain.WorkflowWrites >= 0 && plain.Done > 0 {
			over = fmt.Sprintf("%+.2f (%s)", (r.WorkflowWrites-plain.WorkflowWrites)/float64(r.N), plain.Kind)
		}
		fmt.Fprintf(&writes, "| %d | %s | %s | %s | %.2f | %s | %s | %s | %s |\n", r.N, r.Label(),
			orDash(spark, fmt.Sprintf("%.2f", r.TaskSetWrites/float64(r.N))), orDash(r.OwnResults > 0, fmt.Sprintf("%.2f", r.OwnResults/float64(r.N))),
			r.WorkflowWrites/float64(r.N), over,
			orDash(len(r.ToDriver) > 0, secs(Quantile(r.ToDriver, .5))), orDash(len(r.ToDriver) > 0, secs(Quantile(r.ToDriver, .95))),
			orDash(len(r.ToDriver) > 0, secs(Quantile(r.ToDriver, 1))))
	}
	if writes.Len() > 0 {
		b.WriteString("\n| N | launcher | TaskSet status patches per node (all clients: sparkplug's results, Argo's removals) | node results sparkplug wrote, per node | Workflow writes per node (Argo's controller, submission to done) | over Argo's own | TaskSet to driver: p50 | p95 | max |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
		b.WriteString(writes.String())
	}
	return b.String()
}

// withPrivate is a resident set and, where measured, the private part of
// it.
func withPrivate(rss, private int64) string {
	if private <= 0 {
		return mib(rss)
	}
	return fmt.Sprintf("%s (%.1f private)", mib(rss), float64(private)/(1<<20))
}

// Sorted orders results by N, then by Kinds, then Argo's defaults
// before its flags.
func Sorted(results []Result) []Result {
	s := slices.Clone(results)
	slices.SortStableFunc(s, func(a, b Result) int {
		if a.N != b.N {
			return a.N - b.N
		}
		if k := slices.Index(Kinds, a.Kind) - slices.Index(Kinds, b.Kind); k != 0 {
			return k
		}
		return strings.Compare(a.Argo, b.Argo)
	})
	return s
}

// Merge is old with every result of the same launcher, N and Argo flags
// replaced by the new one's, and the new ones added: one run may measure
// some sizes or launchers, and docs/operations.md keeps the others' last
// figures.
func Merge(old, new []Result) []Result {
	out := slices.DeleteFunc(slices.Clone(old), func(o Result) bool {
		return slices.ContainsFunc(new, func(r Result) bool { return r.Kind == o.Kind && r.N == o.N && r.Argo == o.Argo })
	})
	return Sorted(append(out, new...))
}

// Goals are the goals of the scale work, each as measured: met, not met,
// or left out where this run's results do not measure it. Each is judged
// at Argo's defaults.
func Goals(results []Result) string {
	var b strings.Builder
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**not met**"
	}
	ran := func(kind string, n int) (Result, bool) {
		r, ok := find(results, kind, n, "")
		return r, ok && r.Skipped == ""
	}
	for _, kind := range []string{KindSparkplug, KindController} {
		if sp, ok := ran(kind, 1000); ok {
			if plain, ok := ran(KindPlain, 1000); ok {
				fmt.Fprintf(&b, "- %s: all 1,000 drivers of one workflow at least 3.0 times as fast as Argo's own 1,000 pods: %s (%.2fx: %s against %s).\n",
					kind, verdict(Ratio(sp, plain) >= 3), Ratio(sp, plain), secs(sp.All()), secs(plain.All()))
			}
		}
	}
	if ctl, ok := ran(KindControllerWF, 1000); ok {
		fmt.Fprintf(&b, "- The controller at most 128 MiB resident following 1,000 drivers across 1,000 workflows: %s (the leading replica peaked at %s).\n",
			verdict(ctl.ControllerRSS <= 128<<20), withPrivate(ctl.ControllerRSS, ctl.ControllerPrivate))
		if plain, ok := ran(KindPlainWF, 1000); ok {
			fmt.Fprintf(&b, "- All drivers of 1,000 one-step workflows created no slower than Argo creates the pods of 1,000 one-container-step workflows: %s (%s against %s%s).\n",
				verdict(ctl.All() <= plain.All()), secs(ctl.All()), secs(plain.All()),
				orEmpty(ctl.TaskSetsAll > 0, "; Argo had created the Spark workflows' TaskSets, which sparkplug waits for, at "+secs(ctl.TaskSetsAll)))
		}
		if op, ok := ran(KindOperator, 1000); ok {
			fmt.Fprintf(&b, "- At least 3x faster than the operator in the same run: %s (%.1fx: %s against %s).\n",
				verdict(Ratio(ctl, op) >= 3), Ratio(ctl, op), secs(ctl.All()), secs(op.All()))
		}
	}
	for _, n := range sizes(results) {
		if sc, ok := ran(KindSidecarWF, n); ok && sc.AgentRSS > 0 {
			fmt.Fprintf(&b, "- A sidecar following one driver at most 24 MiB resident (N=%d): %s (the largest peaked at %s).\n",
				n, verdict(sc.AgentRSS <= 24<<20), withPrivate(sc.AgentRSS, sc.AgentPrivate))
		}
	}
	for _, n := range sizes(results) {
		plain, ok := ran(KindPlainWF, n)
		if !ok || plain.WorkflowWrites < 0 || plain.Done <= 0 {
			continue
		}
		for _, kind := range []string{KindSidecarWF, KindControllerWF} {
			if sp, ok := ran(kind, n); ok && sp.WorkflowWrites >= 0 && sp.Done > 0 {
				mine, theirs := sp.WorkflowWrites/float64(n), plain.WorkflowWrites/float64(n)
				fmt.Fprintf(&b, "- %s, N=%d: Argo's Workflow writes per node at most plain-wf's plus one: %s (%.2f against %.2f).\n",
					kind, n, verdict(mine <= theirs+1), mine, theirs)
			}
		}
	}
	return b.String()
}

func orEmpty(ok bool, s string) string {
	if !ok {
		return ""
	}
	return s
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
func ms(d time.Duration) string   { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func orDash(ok bool, s string) string {
	if !ok {
		return "–"
	}
	return s
}

func sizes(results []Result) []int {
	var ns []int
	for _, r := range results {
		if !slices.Contains(ns, r.N) {
			ns = append(ns, r.N)
		}
	}
	return ns
}

func find(results []Result, kind string, n int, argo string) (Result, bool) {
	for _, r := range results {
		if r.Kind == kind && r.N == n && r.Argo == argo {
			return r, true
		}
	}
	return Result{}, false
}

// Section is the block of docs/operations.md between BeginMarker and
// EndMarker: the machine, the table, the plots (paths relative to docs/).
func Section(machine string, results []Result, plots []string) string {
	results = Sorted(results)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", BeginMarker)
	fmt.Fprintf(&b, "Measured by `make bench-e2e` on %s", machine)
	var dates []string
	for _, n := range sizes(results) {
		var ds []string
		for _, r := range results {
			if r.N == n && r.Date != "" && !slices.Contains(ds, r.Date) {
				ds = append(ds, r.Date)
			}
		}
		if len(ds) > 0 {
			dates = append(dates, fmt.Sprintf("N=%d on %s", n, strings.Join(ds, ", ")))
		}
	}
	if len(dates) > 0 {
		fmt.Fprintf(&b, "; %s", strings.Join(dates, "; "))
	}
	b.WriteString(".\n\n")
	for _, kind := range Kinds {
		if slices.ContainsFunc(results, func(r Result) bool { return r.Kind == kind }) {
			fmt.Fprintf(&b, "- `%s`: %s\n", kind, describe[kind])
		}
	}
	b.WriteString("\n")
	b.WriteString(Table(results))
	for _, r := range results {
		if r.Unplayed {
			fmt.Fprintf(&b, "\nAt N=%d, %s ran with its agent pods unplayed: Argo created them and they ran (KWOK), but no argoexec and no acknowledger process did; controller mode needs neither to run a Spark step, and %d of each do not fit this machine beside the control plane. Its sum is the controller replicas' alone; add %d acknowledgers at their `make bench-ack` cost, %.1f to %.1f MiB resident each (stated, not measured here): %.0f to %.0f MiB.\n",
				r.N, r.Label(), r.N, r.N, ackIdleMiB, ackPeakMiB, float64(r.PeakRSS)/(1<<20)+ackIdleMiB*float64(r.N), float64(r.PeakRSS)/(1<<20)+ackPeakMiB*float64(r.N))
		}
	}
	if g := Goals(results); g != "" {
		b.WriteString("\nGoals, as measured (at Argo's defaults):\n\n")
		b.WriteString(g)
	}
	for _, p := range plots {
		fmt.Fprintf(&b, "\n![%s](%s)\n", strings.TrimSuffix(p[strings.LastIndex(p, "/")+1:], ".png"), p)
	}
	fmt.Fprintf(&b, "%s\n", EndMarker)
	return b.String()
}

// ackIdleMiB and ackPeakMiB are the acknowledger's resident memory as
// `make bench-ack` measured it (docs/operations.md, The acknowledger):
// the least idle and the most at the end of its burst of 10,000 calls,
// over three runs. The report states them for agent pods left unplayed.
const (
	ackIdleMiB = 6.3
	ackPeakMiB = 9.7
)

// Load reads the results a previous run saved at path; none if it does
// not exist.
func Load(path string) ([]Result, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rs []Result
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rs, nil
}

// Save writes results to path, for the next run's Merge.
func Save(path string, results []Result) error {
	b, err := json.MarshalIndent(Sorted(results), "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// The markers around the benchmark's section in docs/operations.md.
const (
	BeginMarker = "<!-- bench-e2e: begin (make bench-e2e rewrites this block) -->"
	EndMarker   = "<!-- bench-e2e: end -->"
)

// Rewrite replaces the block between the markers in the file at path.
func Rewrite(path, section string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, BeginMarker), strings.Index(s, EndMarker)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q ... %q block", path, BeginMarker, EndMarker)
	}
	s = s[:i] + strings.TrimSuffix(section, "\n") + s[j+len(EndMarker):]
	return os.WriteFile(path, []byte(s), 0o644)
}
