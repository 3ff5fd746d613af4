package objects

import (
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestNamesFitKubernetesLimits(t *testing.T) {
	long := strings.Repeat("a", 200) + "." + strings.Repeat("b", 52) // 253: the longest workflow name
	if len(long) != 253 {
		t.Fatalf("test setup: len %d", len(long))
	}
	for _, tc := range []struct {
		name, workflow string
		attempt        int
	}{
		{"253-character workflow name", long, 1},
		{"253-character workflow name, attempt 12", long, 12},
		{"huge attempt", long, 1<<31 - 1},
		{"leading digits and dots", "123.abc.DEF", 1},
		{"nothing usable", "---", 3},
		{"empty", "", 1},
		{"ordinary", "nightly-etl-x7k2p", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := NamesFor(Run{
				Workflow: spark.WorkflowRef{Name: tc.workflow, Namespace: "ns", UID: "uid"},
				NodeID:   strings.Repeat("node-", 80), // node ids can be long
				Attempt:  tc.attempt,
			})
			if len(n.Prefix) > spark.ExecutorPodNamePrefixMaxChars {
				t.Errorf("prefix %q is %d characters; Spark allows %d for an executor pod name prefix", n.Prefix, len(n.Prefix), spark.ExecutorPodNamePrefixMaxChars)
			}
			for what, name := range map[string]string{"prefix": n.Prefix, "driver pod": n.DriverPod, "configmap": n.ConfigMap, "service": n.Service, "executor prefix": n.ExecutorPrefix} {
				if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
					t.Errorf("%s %q (%d characters): %v", what, name, len(name), errs)
				}
			}
			if errs := validation.IsDNS1035Label(n.ExecutorPrefix + "-exec-2147483647"); len(errs) > 0 {
				t.Errorf("executor pod name: %v", errs)
			}
			if errs := validation.IsValidLabelValue(n.AppID); len(errs) > 0 {
				t.Errorf("app id %q: %v", n.AppID, errs)
			}
		})
	}
}

func TestNamesKeepTheWorkflowNameReadable(t *testing.T) {
	n := NamesFor(Run{Workflow: spark.WorkflowRef{Name: "Nightly_ETL.v2", UID: "u"}, NodeID: "n", Attempt: 1})
	if !strings.HasPrefix(n.Prefix, "nightly-etl-v2-") {
		t.Errorf("prefix %q: want the workflow name made a DNS label first", n.Prefix)
	}
	long := NamesFor(Run{Workflow: spark.WorkflowRef{Name: strings.Repeat("x", 100), UID: "u"}, NodeID: "n", Attempt: 1})
	if got := strings.Count(long.Prefix, "x"); got != workflowPartMax {
		t.Errorf("prefix %q keeps %d characters of the workflow name, want %d", long.Prefix, got, workflowPartMax)
	}
}

func TestNamesAreDeterministicAndDistinct(t *testing.T) {
	base := Run{Workflow: spark.WorkflowRef{Name: "wf", Namespace: "ns", UID: "uid-1"}, NodeID: "wf-123", TemplateKey: "k", Attempt: 1}
	if a, b := NamesFor(base), NamesFor(base); a != b {
		t.Fatalf("same run, different names:\n%+v\n%+v", a, b)
	}
	first := NamesFor(base)
	for what, r := range map[string]Run{
		"other node":     with(base, func(r *Run) { r.NodeID = "wf-456" }),
		"other workflow": with(base, func(r *Run) { r.Workflow.UID = "uid-2" }),
		"next attempt":   with(base, func(r *Run) { r.Attempt = 2 }),
	} {
		n := NamesFor(r)
		if n.Prefix == first.Prefix || n.DriverPod == first.DriverPod || n.Service == first.Service || n.ConfigMap == first.ConfigMap {
			t.Errorf("%s: names collide with the first run's: %+v", what, n)
		}
		if n.AppID == first.AppID {
			t.Errorf("%s: same application id %s", what, n.AppID)
		}
	}
	// The template key is not part of a run's identity: retries of one node
	// send the same template.
	if n := NamesFor(with(base, func(r *Run) { r.TemplateKey = "other" })); n != first {
		t.Errorf("template key changed the names: %+v", n)
	}
}

func TestAttemptSuffix(t *testing.T) {
	r := Run{Workflow: spark.WorkflowRef{Name: "wf", UID: "u"}, NodeID: "n"}
	for attempt, suffix := range map[int]string{0: "", 1: "", 2: "-a2", 17: "-a17"} {
		r.Attempt = attempt
		n := NamesFor(r)
		if suffix == "" && strings.Contains(n.Prefix, "-a") || !strings.HasSuffix(n.Prefix, suffix) {
			t.Errorf("attempt %d: prefix %q, want suffix %q", attempt, n.Prefix, suffix)
		}
	}
	zero, one := NamesFor(with(r, func(r *Run) { r.Attempt = 0 })), NamesFor(with(r, func(r *Run) { r.Attempt = 1 }))
	if zero != one {
		t.Errorf("attempt 0 is not taken as attempt 1: %+v vs %+v", zero, one)
	}
}

func TestAppIDHasSparksFormat(t *testing.T) {
	n := NamesFor(Run{Workflow: spark.WorkflowRef{Name: "wf", UID: "u"}, NodeID: "n", Attempt: 3})
	if !regexp.MustCompile(`^spark-[0-9a-f]{32}$`).MatchString(n.AppID) {
		t.Errorf("app id %q, want spark-<32 hex>", n.AppID)
	}
}

func TestNamesFromTheDriverPodName(t *testing.T) {
	n := NamesFor(Run{Workflow: spark.WorkflowRef{Name: "wf", UID: "u"}, NodeID: "n", Attempt: 4})
	if got := ServiceName(n.DriverPod); got != n.Service {
		t.Errorf("ServiceName(%s) = %s, want %s", n.DriverPod, got, n.Service)
	}
}

// The driver's ConfigMap is named with a key drawn at each launch, so that
// nobody can make it before the driver mounts it; the driver is read for
// it afterwards, and a previous version's driver, whose ConfigMap has no
// key, still is.
func TestConfigMapNameIsDrawnAndReadFromTheDriver(t *testing.T) {
	r := Run{Workflow: spark.WorkflowRef{Name: strings.Repeat("long-workflow-name-", 4), Namespace: "data", UID: "u"}, NodeID: "n", TemplateKey: "0a1b2c3d4e5f60718293", Attempt: 12}
	keys := map[string]bool{}
	for range 50 {
		k := NewConfKey()
		if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(k) {
			t.Fatalf("key %q, want 8 hex characters", k)
		}
		keys[k] = true
	}
	if len(keys) < 49 {
		t.Errorf("50 keys drawn, %d different: not random", len(keys))
	}
	b := newBuilder(t)
	for _, key := range []string{NewConfKey(), ""} {
		r.ConfKey = key
		n := NamesFor(r)
		want := n.Prefix + "-conf"
		if key != "" {
			want += "-" + key
		}
		if n.ConfigMap != want || len(n.ConfigMap) > 63 {
			t.Errorf("key %q: ConfigMap %q, want %q of at most 63 characters", key, n.ConfigMap, want)
		}
		objs, err := b.Build(body(t), r)
		if err != nil {
			t.Fatal(err)
		}
		if got := ConfigMapOf(objs.Driver); got != n.ConfigMap || objs.ConfigMap.Name != n.ConfigMap {
			t.Errorf("key %q: driver mounts %q, ConfigMap %q; want %q", key, got, objs.ConfigMap.Name, n.ConfigMap)
		}
	}
	// Only the run's own names count: another ConfigMap the body mounts,
	// or one that only looks like the run's, is not it.
	d := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: NamesFor(r).DriverPod}}
	for _, other := range []string{"app-settings", NamesFor(r).Prefix + "-conf-zzzzzzzz", NamesFor(r).Prefix + "-conf-0123456789", NamesFor(r).Prefix + "-conf-ABCDEF01"} {
		d.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: other}}}}}
		if got := ConfigMapOf(d); got != "" {
			t.Errorf("ConfigMapOf a driver mounting only %s = %q, want none", other, got)
		}
	}
}

func TestAppNameFromSparkConf(t *testing.T) {
	r := goldenRuns["default"]
	s := body(t)
	if n := namesFor(s, r); n.AppName != n.Prefix {
		t.Errorf("app name %q, want the prefix %q", n.AppName, n.Prefix)
	}
	s.SparkConf = map[string]string{spark.ConfAppName: "My App"}
	n := namesFor(s, r)
	if n.AppName != "My App" {
		t.Errorf("app name %q, want sparkConf's", n.AppName)
	}
	objs, err := newBuilder(t).Cluster(s, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := objs.Driver.Labels[spark.LabelAppName]; got != "my-app" {
		t.Errorf("spark-app-name label %q, want my-app", got)
	}
}

func TestDNS1035AndLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"abc":           "abc",
		"ABC.def_ghi":   "abc-def-ghi",
		"9lives":        "lives",
		"--a--b--":      "a-b",
		"":              "spark",
		"...":           "spark",
		"a" + "\u00e9b": "a-b",
	} {
		if got := dns1035(in, 30); got != want {
			t.Errorf("dns1035(%q) = %q, want %q", in, got, want)
		}
	}
	if got := dns1035("abcdef-ghi", 7); got != "abcdef" {
		t.Errorf("cut at a dash: %q", got)
	}
	for in, want := range map[string]string{
		"Nightly ETL":           "nightly-etl",
		"9lives":                "9lives",
		strings.Repeat("x", 80): strings.Repeat("x", 63),
		"-x-":                   "x",
	} {
		if got := labelValue(in); got != want {
			t.Errorf("labelValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVolumeName(t *testing.T) {
	if got := volumeName("extra", "-vol"); got != "extra-vol" {
		t.Errorf("plain name: %q", got)
	}
	a, b := volumeName(strings.Repeat("c", 100)+"a", "-vol"), volumeName(strings.Repeat("c", 100)+"b", "-vol")
	for _, n := range []string{a, b, volumeName("my.config", "-vol")} {
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Errorf("volume name %q: %v", n, errs)
		}
	}
	if a == b {
		t.Errorf("two long names got the same volume name %q", a)
	}
}

func with(r Run, f func(*Run)) Run {
	f(&r)
	return r
}
