package examples

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// sparkRelease is the Apache Spark release the examples run, the Spark
// operator's own examples' (plugin/convert/testdata/kso-examples): a user
// moving over finds the same image.
const sparkRelease = "4.0.4"

// spark35 are the calls that stay on Spark 3.5, each said why in its
// file's comment: a platform moving its jobs to Spark 4 one at a time
// calls one library step with either image.
var spark35 = []string{
	"workflow-template-usage.yaml:main.transitive-closure->spark-jobs.spark-submit",
}

var (
	// imageRelease is the Spark release an image's tag starts with.
	imageRelease = regexp.MustCompile(`:([0-9]+\.[0-9]+\.[0-9]+)(-|$)`)
	// examplesJar is the jar of Spark's examples, named for its Scala and
	// Spark versions.
	examplesJar = regexp.MustCompile(`/spark-examples_([0-9.]+)-([0-9]+\.[0-9]+\.[0-9]+)\.jar$`)
)

// Every example runs sparkRelease (but the spark35 calls, on Spark 3.5),
// and each body agrees with itself: the images' tags, sparkVersion and the
// examples jar name one release, and the jar the Scala version that
// release is built for (2.13 from Spark 4, 2.12 before).
func TestExamplesRunOneSparkRelease(t *testing.T) {
	calls, _ := sparkCalls(loadExamples(t))
	b := newBuilder(t)
	seen35 := map[string]bool{}
	for _, c := range calls {
		t.Run(c.path, func(t *testing.T) {
			r, err := render(b, c)
			if err != nil {
				t.Fatal(err)
			}
			s := r.body
			m := imageRelease.FindStringSubmatch(s.DriverImage())
			if m == nil {
				t.Fatalf("image %q: its tag names no Spark release", s.DriverImage())
			}
			release := m[1]
			switch {
			case slices.Contains(spark35, c.path):
				seen35[c.path] = true
				if !strings.HasPrefix(release, "3.5.") {
					t.Errorf("image %q: kept on Spark 3.5, it runs %s; drop it from spark35 and its file's comment", s.DriverImage(), release)
				}
			case release != sparkRelease:
				t.Errorf("image %q: Spark %s, want %s as every example", s.DriverImage(), release, sparkRelease)
			}
			if e := imageRelease.FindStringSubmatch(s.ExecutorImage()); e == nil || e[1] != release {
				t.Errorf("executor image %q: not Spark %s, the driver's", s.ExecutorImage(), release)
			}
			if s.SparkVersion != "" && s.SparkVersion != release {
				t.Errorf("sparkVersion %s, the image's Spark %s", s.SparkVersion, release)
			}
			if s.MainApplicationFile == nil {
				return
			}
			jar := examplesJar.FindStringSubmatch(*s.MainApplicationFile)
			if jar == nil {
				return
			}
			scala := "2.13"
			if strings.HasPrefix(release, "3.") {
				scala = "2.12"
			}
			if jar[1] != scala || jar[2] != release {
				t.Errorf("mainApplicationFile %s: the image has spark-examples_%s-%s.jar", *s.MainApplicationFile, scala, release)
			}
		})
	}
	for _, p := range spark35 {
		if !seen35[p] {
			t.Errorf("spark35 names %s, which no example reaches", p)
		}
	}
}

// The step the plugin's description shows and the chart's helm test runs
// are on sparkRelease too, as the examples.
func TestManifestsRunTheExamplesSparkRelease(t *testing.T) {
	for _, f := range []string{"../plugin.yaml", "../plugin-ack.yaml", "../manifests/chart/sparkplug/values.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		images := regexp.MustCompile(`(?m)^\s*image: (\S*spark:\S+)$`).FindAllStringSubmatch(string(b), -1)
		if len(images) == 0 {
			t.Errorf("%s: no Spark image", f)
		}
		for _, m := range images {
			if r := imageRelease.FindStringSubmatch(m[1]); r == nil || r[1] != sparkRelease {
				t.Errorf("%s: image %s, want Spark %s as the examples", f, m[1], sparkRelease)
			}
		}
		if !strings.Contains(string(b), "spark-examples_2.13-"+sparkRelease+".jar") {
			t.Errorf("%s: no spark-examples_2.13-%s.jar", f, sparkRelease)
		}
	}
}
