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
		{Kind: KindSparkplug, N: 4, Created: pods(time.Second, 4), Done: 9 * time.Second, APIRequests: 40, OwnRequests: 12,
			PeakRSS: 40 << 20, CPU: 1500 * time.Millisecond, Polls: []time.Duration{time.Millisecond, 3 * time.Millisecond}, PollRequests: 0,
			WorkflowWrites: 30, TaskSetWrites: 6},
		{Kind: KindPlain, N: 4, Created: pods(2*time.Second, 4), APIRequests: 20, OwnRequests: -1},
		{Kind: KindOperator, N: 4, Created: pods(10*time.Second, 4), Done: 60 * time.Second, APIRequests: 80, OwnRequests: -1},
	}
}

func TestTable(t *testing.T) {
	rs := results()
	if got := Ratio(rs[0], rs[1]); got != 2 {
		t.Errorf("ratio to plain = %v, want 2", got)
	}
	table := Table(rs)
	for _, want := range []string{
		"| 4 | sparkplug | 1.0 s | 4.0 s | 60 | 9.0 s | 10.0 | 3.00 | 40.0 MiB | 1.5 s | 1.00 ms | 3.00 ms | 0.000 |",
		"| 4 | plain | 2.0 s | 8.0 s | 30 | – | 5.0 | – | – | – | – | – | – |",
		"| 4 | 2.00 | 10.0 |",
		"| 4 | 1.50 | 7.50 |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
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

	readme := filepath.Join(dir, "README.md")
	if err := os.WriteFile(readme, []byte("# x\n\nbefore\n"+BeginMarker+"\nold\n"+EndMarker+"\nafter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Rewrite(readme, Section("a machine", results(), []string{"docs/bench/scale-4.png"})); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(readme)
	got := string(b)
	for _, want := range []string{"before\n" + BeginMarker + "\nMeasured by `make bench-e2e` on a machine.", "![scale-4](docs/bench/scale-4.png)\n" + EndMarker + "\nafter\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten README lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "old") {
		t.Errorf("the old block stayed:\n%s", got)
	}
	if err := Rewrite(filepath.Join(dir, "scale-4.png"), "x"); err == nil {
		t.Error("Rewrite of a file without the markers succeeded")
	}
}
