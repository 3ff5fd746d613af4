package bench

import (
	"fmt"
	"image/color"
	"os"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The launchers compared.
const (
	KindSparkplug = "sparkplug"
	KindPlain     = "plain"
	KindOperator  = "operator"
)

// describe says what a launcher's row is.
var describe = map[string]string{
	KindSparkplug: "sparkplug: N Spark steps",
	KindPlain:     "Argo: N container steps",
	KindOperator:  "Spark operator v2.5.2: N SparkApplications (fake spark-submit: its best case)",
}

// Result is one launcher's run of N steps.
type Result struct {
	Kind string
	N    int
	// Created is when each driver pod (pod) was first seen, since the
	// submission, sorted.
	Created []time.Duration
	// Done is when every node was done (0: not measured).
	Done time.Duration
	// APIRequests are the kube-apiserver's requests (all clients, watches
	// not counted) from the submission until every pod was created.
	APIRequests float64
	// OwnRequests are the launcher's own requests in that time (the
	// sidecar's; -1: not measured).
	OwnRequests float64
	// PeakRSS is the sidecar's peak resident set (bytes), CPU its CPU time
	// (0: no sidecar).
	PeakRSS int64
	CPU     time.Duration
	// Polls are the latencies of status polls sent to the sidecar while it
	// followed the N drivers, PollRequests the API requests it made
	// meanwhile.
	Polls        []time.Duration
	PollRequests float64
	// WorkflowWrites are the Workflow updates and patches (all clients:
	// the controller's) and TaskSetWrites the WorkflowTaskSet status
	// patches (the sidecar's results) from the submission until every
	// node was done (-1: not measured).
	WorkflowWrites, TaskSetWrites float64
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

// Table is the results as a Markdown table, one row per launcher and N,
// then the ratios per N.
func Table(results []Result) string {
	var b strings.Builder
	b.WriteString("| N | launcher | first pod | all pods | pods/min | all done | API requests per launch: all clients | sparkplug's own | sidecar peak RSS | sidecar CPU | poll p50 | poll p99 | API requests per poll |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %.0f | %s | %.1f | %s | %s | %s | %s | %s | %s |\n",
			r.N, r.Kind, secs(r.First()), secs(r.All()), r.PerMinute(), orDash(r.Done > 0, secs(r.Done)),
			r.APIRequests/float64(r.N), orDash(r.OwnRequests >= 0, fmt.Sprintf("%.2f", r.OwnRequests/float64(r.N))),
			orDash(r.PeakRSS > 0, fmt.Sprintf("%.1f MiB", float64(r.PeakRSS)/(1<<20))),
			orDash(r.PeakRSS > 0, secs(r.CPU)),
			orDash(len(r.Polls) > 0, ms(Quantile(r.Polls, .5))), orDash(len(r.Polls) > 0, ms(Quantile(r.Polls, .99))),
			orDash(len(r.Polls) > 0, fmt.Sprintf("%.3f", r.PollRequests/float64(len(r.Polls)))))
	}
	b.WriteString("\n| N | sparkplug's launch rate over Argo's (all pods) | over the operator's |\n|---:|---:|---:|\n")
	for _, n := range sizes(results) {
		sp, ok := find(results, KindSparkplug, n)
		if !ok {
			continue
		}
		plain, okP := find(results, KindPlain, n)
		op, okO := find(results, KindOperator, n)
		fmt.Fprintf(&b, "| %d | %s | %s |\n", n, orDash(okP, fmt.Sprintf("%.2f", Ratio(sp, plain))), orDash(okO, fmt.Sprintf("%.1f", Ratio(sp, op))))
	}
	var writes strings.Builder
	for _, r := range results {
		if r.Kind == KindSparkplug && r.WorkflowWrites >= 0 && r.Done > 0 {
			fmt.Fprintf(&writes, "| %d | %.2f | %.2f |\n", r.N, r.TaskSetWrites/float64(r.N), r.WorkflowWrites/float64(r.N))
		}
	}
	if writes.Len() > 0 {
		b.WriteString("\n| N | sparkplug: TaskSet status patches per node (its results) | Workflow writes per node (the controller's, submission to done) |\n|---:|---:|---:|\n")
		b.WriteString(writes.String())
	}
	return b.String()
}

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

func find(results []Result, kind string, n int) (Result, bool) {
	for _, r := range results {
		if r.Kind == kind && r.N == n {
			return r, true
		}
	}
	return Result{}, false
}

// lineColors are the launchers' colors in the plots.
var lineColors = map[string]color.Color{
	KindSparkplug: color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff},
	KindPlain:     color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff},
	KindOperator:  color.RGBA{R: 0x75, G: 0x70, B: 0xb3, A: 0xff},
}

// Plot draws pods created over time for the results of one N into a PNG
// at path.
func Plot(path string, n int, results []Result) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("N = %d: driver pods (pods) created since submission", n)
	p.X.Label.Text = "seconds since the workflow (the SparkApplications) was submitted"
	p.Y.Label.Text = "pods created"
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = false, false
	p.Y.Min, p.X.Min = 0, 0
	for _, r := range results {
		if r.N != n || len(r.Created) == 0 {
			continue
		}
		pts := make(plotter.XYs, 0, len(r.Created)+1)
		pts = append(pts, plotter.XY{X: 0, Y: 0})
		for i, d := range r.Created {
			pts = append(pts, plotter.XY{X: d.Seconds(), Y: float64(i + 1)})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = lineColors[r.Kind]
		line.Width = vg.Points(2)
		p.Add(line)
		p.Legend.Add(describe[r.Kind], line)
	}
	p.Legend.ThumbnailWidth = vg.Points(20)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.YPosition = draw.PosBottom
	return p.Save(9*vg.Inch, 5*vg.Inch, path)
}

// Section is the README's block between BeginMarker and EndMarker: the
// machine, the table, the plots.
func Section(machine string, results []Result, plots []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", BeginMarker)
	fmt.Fprintf(&b, "Measured by `make bench-e2e` on %s.\n\n", machine)
	b.WriteString(Table(results))
	for _, p := range plots {
		fmt.Fprintf(&b, "\n![%s](%s)\n", strings.TrimSuffix(p[strings.LastIndex(p, "/")+1:], ".png"), p)
	}
	fmt.Fprintf(&b, "%s\n", EndMarker)
	return b.String()
}

// The README's markers around the benchmark's section.
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
