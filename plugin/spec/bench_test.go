package spec

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

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

// maxBody is the largest spark body a request the server reads can carry
// (edge.MaxBodyBytes, 4 MiB, less 4 KiB for the rest of the request).
const maxBody = 4<<20 - 4<<10

// worstBodies are the costliest bodies of at most maxBody bytes found, by
// what they make Parse do for every few bytes.
var worstBodies = map[string]func() []byte{
	// 110,000 problems, a 1 MiB value and a 1 MiB key.
	"junk": func() []byte { return junkBody(55000, 1<<20) },
	// Unknown keys one edit from a field of the spec, each a candidate
	// for "did you mean".
	"unknown-fields": func() []byte {
		return repeated(`{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar"`, `,"imagx%d":0`, `}`)
	},
	// The same, deep in a pod template, whose types are the largest.
	"unknown-nested-fields": func() []byte {
		return repeated(`{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","driver":{"template":{"spec":{"containers":[{"name":"c"`, `,"livenessProbx%d":0`, `}]}}}}`)
	},
	// The same key again and again.
	"duplicate-fields": func() []byte {
		return repeated(`{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar"`, `,"mainClass":"P%d"`, `}`)
	},
	// Quantities, each read by apimachinery, in a sidecar's limits.
	"quantities": func() []byte {
		return repeated(`{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","driver":{"sidecars":[{"name":"s","image":"i","resources":{"limits":{"x"`+`:"1"`, `,"r%d":"9.999e-9"`, `}}}]}}`)
	},
	// Quantities with the largest exponent a field may have, and one
	// apimachinery would take minutes over, in every quantity field.
	"refused-quantities": func() []byte {
		return repeated(`{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","driver":{"coreLimit":"1e-99999999","memory":"1e-99999999","sidecars":[{"name":"s","image":"i","resources":{"limits":{"x"`+`:"1e-99999999"`, `,"r%d":"1e-99"`, `}}}]}}`)
	},
	// sparkConf keys, each checked against the reserved ones.
	"sparkconf-keys": func() []byte {
		return repeated(`{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","sparkConf":{"a":"b"`, `,"spark.kubernetes.driver.label.sparkplug.io/k%d":""`, `}}`)
	},
}

// repeated is head, then item (formatted with its index) as often as fits
// in maxBody, then tail.
func repeated(head, item, tail string) []byte {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; ; i++ {
		next := fmt.Sprintf(item, i)
		if b.Len()+len(next)+len(tail) > maxBody {
			break
		}
		b.WriteString(next)
	}
	b.WriteString(tail)
	return []byte(b.String())
}

// What the costliest bodies a request can carry cost to answer: make bench
// prints it, and the README quotes the worst of them.
func BenchmarkParse4MiB(b *testing.B) {
	for _, name := range sortedKeys(worstBodies) {
		b.Run(name, func(b *testing.B) {
			raw := worstBodies[name]()
			if len(raw) > maxBody {
				b.Fatalf("a %d-byte body would not fit in a request the server reads", len(raw))
			}
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				_, _ = Parse(raw) // valid or not: what it costs
			}
			// CPU time, garbage collection included: on a shared
			// machine it says more than the time on the clock.
			b.ReportMetric(float64(cpuTime(b)-start)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
