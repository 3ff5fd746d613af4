package objects

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// fuzzPaths are where FuzzBuild puts its fuzzed metadata key and value in
// the body.
var fuzzPaths = [][]string{
	{"driver", "labels"}, {"driver", "annotations"}, {"executor", "labels"}, {"executor", "annotations"},
	{"driver", "serviceLabels"}, {"driver", "serviceAnnotations"},
	{"driver", "template", "metadata", "labels"}, {"executor", "template", "metadata", "annotations"},
	{"sparkUIOptions", "serviceLabels"}, {"sparkUIOptions", "ingressAnnotations"},
	{"nodeSelector"}, {"hadoopConf"},
}

// FuzzBuild builds the objects of a run from a valid body (one of
// testdata/*.input.yaml) with some of its fields replaced by fuzzed values:
// a sparkConf entry, a label or annotation at one of fuzzPaths, the
// driver's memory, cores as strings, the image, an argument. When the body
// still parses and the build succeeds, every object it built is in the
// workflow's namespace and carries sparkplug's labels with the run's
// values; the driver is owned by the Workflow; and no reserved key (Spark's
// labels, spark.ReservedKey's domains) on an object, nor in the conf that
// labels the executors, holds a value other than sparkplug's own. Plain
// `go test` runs the seeds.
func FuzzBuild(f *testing.F) {
	bases := fuzzBases(f)
	type seed struct {
		base                                  uint8 // an index in the sorted testdata/*.input.yaml
		confKey, confValue                    string
		where                                 uint8 // an index in fuzzPaths
		key, value, memory, cores, image, arg string
	}
	seeds := []seed{
		{8, "", "", 0, "", "", "", "", "", ""},
		{8, "spark.executor.memory", "2g", 0, "team", "data", "1g", "2", "spark:3.5.3", "1000"},
		{3, "spark.kubernetes.driver.label.team", "data", 1, "example.com/run", "etl {{APP_ID}}", "512m", "1", "", ""},
		{7, "spark.kubernetes.executor.annotation.example.com/x", "y", 2, "app.kubernetes.io/part-of", "etl", "1536m", "1200m", "", "--x"},
		{2, "spark.kubernetes.driver.service.label.tier", "spark", 4, "tier", "spark", "", "", "", ""},
		{1, "spark.kubernetes.driver.service.annotation.example.com/y", "z", 5, "example.com/z", "w", "", "", "", ""},
		{6, "spark.app.name", "My App!", 6, "team", "data", "", "", "", ""},
		{6, "spark.kubernetes.driver.label.sparkplug.io/node", "x", 7, "sparkplug.io/reported", "x", "", "", "", ""},
		{4, "spark.kubernetes.executor.label.spark-role", "x", 3, "workflows.argoproj.io/x", "y", "", "", "", ""},
		{9, "spark.driver.memoryOverhead", "1g", 8, "app", "ui", "4Gi", "2", "", ""},
		{9, "spark.kubernetes.driver.annotation.a", "b", 9, "nginx.ingress.kubernetes.io/rewrite-target", "/", "", "", "", ""},
		{10, "spark.ui.port", "4050", 10, "zone", "a", "", "", "", ""},
		{11, "spark.driver.port", "7100", 11, "fs.defaultFS", "hdfs://nn", "", "", "", ""},
		{5, "spark.kubernetes.driver.label.sparkplug.io/node", "x", 0, "sparkplug.io/node", "x", "", "", "", ""},
		{0, "spark.kubernetes.executor.label.app", "x", 1, "sparkplug.io/reported", "x", "", "", "", ""},
		// sparkConf's Service labels and annotations were not checked for
		// reserved keys: the driver Service carried these.
		{8, "spark.kubernetes.driver.service.annotation.sparkplug.io/reported", "x", 0, "", "", "", "", "", ""},
		{8, "spark.kubernetes.driver.service.label.sparkplug.io/stopped", "x", 0, "", "", "", "", "", ""},
		{8, "spark.kubernetes.driver.service.label.spark-exec-id", "1", 0, "", "", "", "", "", ""},
	}
	for i, s := range seeds {
		f.Add(s.base, s.confKey, s.confValue, s.where, s.key, s.value, s.memory, s.cores, s.image, s.arg, uint8(i))
	}
	b := newBuilder(f)
	f.Fuzz(func(t *testing.T, base uint8, confKey, confValue string, where uint8, key, value, memory, cores, image, arg string, attempt uint8) {
		body := bases[int(base)%len(bases)]
		raw, err := mutated(body, confKey, confValue, fuzzPaths[int(where)%len(fuzzPaths)], key, value, memory, cores, image, arg)
		if err != nil {
			t.Fatal(err)
		}
		s, err := spec.Parse(raw)
		if err != nil {
			return // FuzzParse's business
		}
		r := goldenRuns["default"]
		r.Attempt = 1 + int(attempt%4)
		objs, err := b.Build(s, r)
		if err != nil {
			return // a build error is the node's SUBMISSION_FAILED
		}
		checkBuilt(t, s, r, objs)
	})
}

// fuzzBases are the golden inputs, as JSON objects.
func fuzzBases(f *testing.F) []map[string]any {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.input.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no golden inputs: %v", err)
	}
	var out []map[string]any
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(raw, &m); err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		out = append(out, m)
	}
	return out
}

// mutated is body with the fuzzed values set, as JSON; empty values leave
// their field as it is.
func mutated(body map[string]any, confKey, confValue string, path []string, key, value, memory, cores, image, arg string) ([]byte, error) {
	// A deep copy: the bases are shared by every input.
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	set := func(path []string, k string, v any) {
		cur := m
		for _, p := range path {
			next, ok := cur[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
		cur[k] = v
	}
	if confKey != "" {
		set([]string{"sparkConf"}, confKey, confValue)
	}
	if key != "" {
		set(path, key, value)
	}
	if memory != "" {
		set([]string{"driver"}, "memory", memory)
	}
	if cores != "" {
		set([]string{"driver"}, "coreLimit", cores)
		set([]string{"executor"}, "coreRequest", cores)
	}
	if image != "" {
		m["image"] = image
	}
	if arg != "" {
		args, _ := m["arguments"].([]any)
		m["arguments"] = append(args, arg)
	}
	return json.Marshal(m)
}

// checkBuilt checks the objects of a run for the invariants FuzzBuild
// states.
func checkBuilt(t *testing.T, s *spec.SparkApplicationSpec, r Run, objs *Set) {
	t.Helper()
	n := namesFor(s, r)
	ownLabels := sparkplugLabels(r)
	ownLabels[spark.LabelAppSelector] = n.AppID
	ownLabels[spark.LabelRole] = spark.RoleDriver
	ownLabels[spark.LabelAppName] = valueOr(labelValue(n.AppName), n.Prefix)
	maps.Copy(ownLabels, operatorLabels(n))
	if s.SparkVersion != "" {
		ownLabels[spark.LabelVersion] = s.SparkVersion
	}
	ownAnnotations := sparkplugAnnotations(r)
	if s.TimeToLiveSeconds != nil {
		ownLabels[spark.LabelTTLSeconds] = strconv.FormatInt(*s.TimeToLiveSeconds, 10)
		ownAnnotations[spark.AnnotationTTLSeconds] = ownLabels[spark.LabelTTLSeconds]
	}

	all := []metav1.Object{objs.Driver, objs.ConfigMap, objs.Service}
	for _, o := range objs.Extra {
		all = append(all, o)
	}
	if objs.PodGroup != nil {
		all = append(all, objs.PodGroup)
	}
	for _, o := range all {
		what := fmt.Sprintf("%T %s", o, o.GetName())
		if o.GetNamespace() != r.Workflow.Namespace {
			t.Errorf("%s in namespace %q, want the workflow's %q", what, o.GetNamespace(), r.Workflow.Namespace)
		}
		for _, k := range sparkplugLabelKeys {
			if got, want := o.GetLabels()[k], ownLabels[k]; got != want {
				t.Errorf("%s label %s=%q, want %q", what, k, got, want)
			}
		}
		checkReserved(t, what+" label", o.GetLabels(), ownLabels)
		checkReserved(t, what+" annotation", o.GetAnnotations(), ownAnnotations)
	}
	if o := objs.Driver; o.Labels[spark.LabelRole] != spark.RoleDriver {
		t.Errorf("driver labelled %s=%q", spark.LabelRole, o.Labels[spark.LabelRole])
	}
	refs := objs.Driver.OwnerReferences
	if len(refs) != 1 || refs[0].Kind != "Workflow" || refs[0].APIVersion != "argoproj.io/v1alpha1" || refs[0].UID != types.UID(r.Workflow.UID) ||
		refs[0].Name != r.Workflow.Name || !ptr.Deref(refs[0].Controller, false) {
		t.Errorf("driver owners %+v, want the Workflow %s (uid %s) as controller", refs, r.Workflow.Name, r.Workflow.UID)
	}

	// The executors are labelled by the conf: Spark sets its own labels on
	// them, sparkplug's must hold the run's values, and no other reserved
	// key may be set at all.
	c := Properties(s, r)
	executorLabels := sparkplugLabels(r)
	maps.Copy(executorLabels, operatorLabels(n))
	for _, prefix := range []string{spark.ConfExecutorLabelPrefix, spark.ConfExecutorAnnotationPrefix} {
		for k, v := range prefixed(c, prefix) {
			if _, reserved := spark.ReservedLabels[k]; !reserved && spark.ReservedKey(k) == "" {
				continue
			}
			if want, ok := executorLabels[k]; !ok || v != want || prefix != spark.ConfExecutorLabelPrefix {
				t.Errorf("conf %s%s=%q: a reserved key the run does not set so", prefix, k, v)
			}
		}
	}
	for _, k := range sparkplugLabelKeys {
		if got := c[spark.ConfExecutorLabelPrefix+k]; got != executorLabels[k] {
			t.Errorf("conf %s%s=%q, want %q", spark.ConfExecutorLabelPrefix, k, got, executorLabels[k])
		}
	}
}

// checkReserved: every reserved key in meta has sparkplug's value for it.
func checkReserved(t *testing.T, what string, meta, own map[string]string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if _, reserved := spark.ReservedLabels[k]; !reserved && spark.ReservedKey(k) == "" {
			continue
		}
		if want, ok := own[k]; !ok || meta[k] != want {
			t.Errorf("%s %s=%q is reserved, and not sparkplug's (%q)", what, k, meta[k], want)
		}
	}
}
