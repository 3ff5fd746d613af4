package objects

import (
	"path/filepath"
	"testing"
)

// What building a launch's objects costs: the driver pod, its ConfigMap
// (spark.properties and the executor pod template) and its Service, from
// a defaulted body. Run by make bench.
func BenchmarkBuild(b *testing.B) {
	for _, name := range []string{"spark-pi", "kitchen-sink"} {
		b.Run(name, func(b *testing.B) {
			builder := newBuilder(b)
			s := readBody(b, filepath.Join("testdata", name+".input.yaml"))
			run := goldenRuns["default"]
			b.ReportAllocs()
			for b.Loop() {
				if _, err := builder.Build(s, run); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
