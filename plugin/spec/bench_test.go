package spec

import "testing"

// What reading a request's body costs: strict decoding, defaults and
// validation of the Spark operator's SparkPi spec. Run by make bench.
func BenchmarkParse(b *testing.B) {
	raw := readYAML(b, "testdata/spark-pi.yaml")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}
