package convert

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	bodyspec "github.com/sparkplug-io/sparkplug/plugin/spec"
)

// A body the plugin accepts: conversions of it report nothing about the
// body.
const goodSpec = `
  type: Scala
  mode: cluster
  image: spark:3.5.3
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
  driver:
    serviceAccount: spark`

func sparkApp(meta string) string {
	return "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata:" + meta + "\nspec:" + goodSpec + "\n"
}

// scheduled is a ScheduledSparkApplication named nightly with the given
// spec fields besides the template.
func scheduled(fields string) string {
	return "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata:\n  name: nightly\nspec:\n" +
		fields + "\n  template:" + strings.ReplaceAll(goodSpec, "\n", "\n  ") + "\n"
}

// convertOne converts a document that holds one object.
func convertOne(t *testing.T, doc string, opts Options) Result {
	t.Helper()
	results := Convert([]byte(doc), opts)
	if len(results) != 1 {
		t.Fatalf("%d results, want 1: %+v", len(results), results)
	}
	return results[0]
}

// everyRun says whether f is one of the findings of every object
// converted without --service-account, and of every
// ScheduledSparkApplication: what no field of the input can carry over.
func everyRun(f Finding) bool {
	return f.Advice
}

// wantFindings checks findings by path and a part of the message.
func wantFindings(t *testing.T, got []Finding, want map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range got {
		part, ok := want[f.Path]
		switch {
		case everyRun(f) && (!ok || !strings.Contains(f.Message, part)):
			continue // reported of every object; a test asks for it by name
		case !ok:
			t.Errorf("unexpected finding %s", f)
		case !strings.Contains(f.Message, part):
			t.Errorf("finding %s\nwant its message to contain %q", f, part)
		}
		seen[f.Path] = true
	}
	for path := range want {
		if !seen[path] {
			t.Errorf("no finding at %q; want one containing %q", path, want[path])
		}
	}
}

func TestWorkflowNames(t *testing.T) {
	tests := []struct {
		name, meta       string
		opts             Options
		wantName, wantGN string
		findings         map[string]string
	}{
		{"one run, submitted again and again: generateName", "\n  name: spark-pi", Options{}, "", "spark-pi-", nil},
		{"--keep-names: the name", "\n  name: spark-pi", Options{KeepNames: true}, "spark-pi", "", nil},
		{"generateName stays", "\n  generateName: pi-", Options{}, "", "pi-", nil},
		{"generateName stays with --keep-names", "\n  generateName: pi-", Options{KeepNames: true}, "", "pi-", nil},
		{"name wins over generateName, as in Kubernetes", "\n  name: spark-pi\n  generateName: other-", Options{}, "", "spark-pi-", nil},
		{"a long name is left to the API server's generateName", "\n  name: " + strings.Repeat("a", 70), Options{}, "", strings.Repeat("a", 70) + "-", nil},
		{"a long name is shortened with --keep-names", "\n  name: " + strings.Repeat("a", 70), Options{KeepNames: true}, strings.Repeat("a", 54) + "-" + hashSuffix(strings.Repeat("a", 70)), "",
			map[string]string{"metadata.name": "70 characters, more than the 63 Argo allows a Workflow; shortened to"}},
		{"no name", "\n  namespace: x", Options{}, "", "spark-", map[string]string{"metadata.name": `missing; the Workflow gets generateName "spark-"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := convertOne(t, sparkApp(tt.meta), tt.opts)
			wantFindings(t, r.Findings, tt.findings)
			wf, ok := r.Object.(*wfv1.Workflow)
			if !ok {
				t.Fatalf("object %T, want a Workflow", r.Object)
			}
			if wf.Name != tt.wantName || wf.GenerateName != tt.wantGN {
				t.Errorf("name %q, generateName %q; want %q, %q", wf.Name, wf.GenerateName, tt.wantName, tt.wantGN)
			}
			if len(wf.Name) > MaxWorkflowName {
				t.Errorf("name of %d characters", len(wf.Name))
			}
		})
	}
}

func TestCronWorkflowNames(t *testing.T) {
	long := "quarterly-revenue-reconciliation-for-the-finance-department"
	tests := []struct {
		name, meta       string
		wantName, wantGN string
		findings         map[string]string
	}{
		{"kept", "\n  name: nightly", "nightly", "", nil},
		{"52 characters fit", "\n  name: " + strings.Repeat("n", 52), strings.Repeat("n", 52), "", nil},
		{"53 do not", "\n  name: " + strings.Repeat("n", 53), strings.Repeat("n", 43) + "-" + hashSuffix(strings.Repeat("n", 53)), "",
			map[string]string{"metadata.name": "53 characters, more than the 52 Argo allows a CronWorkflow"}},
		{"shortened at a word", "\n  name: " + long, "quarterly-revenue-reconciliation-for-the-fi-" + hashSuffix(long), "",
			map[string]string{"metadata.name": "shortened to"}},
		{"generateName that fits", "\n  generateName: nightly-", "", "nightly-", nil},
		{"generateName too long with the suffix", "\n  generateName: " + strings.Repeat("g", 48) + "-", "", strings.Repeat("g", 37) + "-" + hashSuffix(strings.Repeat("g", 48)) + "-",
			map[string]string{"metadata.generateName": "49 characters: with the 5 the API server appends, more than the 52"}},
		{"no name", "\n  namespace: x", "", "spark-", map[string]string{"metadata.name": "missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(scheduled("  schedule: \"@daily\"\n  concurrencyPolicy: Forbid"), "metadata:\n  name: nightly", "metadata:"+tt.meta, 1)
			r := convertOne(t, doc, Options{})
			wantFindings(t, r.Findings, tt.findings)
			cw := r.Object.(*wfv1.CronWorkflow)
			if cw.Name != tt.wantName || cw.GenerateName != tt.wantGN {
				t.Errorf("name %q, generateName %q; want %q, %q", cw.Name, cw.GenerateName, tt.wantName, tt.wantGN)
			}
			if len(cw.Name) > MaxCronWorkflowName || len(cw.GenerateName)+generatedSuffix > MaxCronWorkflowName {
				t.Errorf("name %q, generateName %q: longer than Argo allows", cw.Name, cw.GenerateName)
			}
		})
	}
}

func TestShorten(t *testing.T) {
	a, b := strings.Repeat("x", 60)+"-one", strings.Repeat("x", 60)+"-two"
	if shorten(a, 52) != shorten(a, 52) {
		t.Error("not deterministic")
	}
	if shorten(a, 52) == shorten(b, 52) {
		t.Errorf("%q and %q both give %q", a, b, shorten(a, 52))
	}
	for _, name := range []string{a, "a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z-0-1-2-3"} {
		s := shorten(name, 52)
		if len(s) > 52 || strings.Contains(s, "--") {
			t.Errorf("shorten(%q) = %q", name, s)
		}
	}
	if got := shorten("short", 52); got != "short" {
		t.Errorf("shorten(short) = %q", got)
	}
}

func TestMetadata(t *testing.T) {
	meta := `
  name: etl
  namespace: data
  labels: {app: etl, team: data}
  annotations:
    owner: data-platform
    kubectl.kubernetes.io/last-applied-configuration: '{"kind":"SparkApplication"}'
  uid: 9a1b8c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d
  resourceVersion: "48213"
  generation: 4
  creationTimestamp: "2026-01-01T02:30:00Z"
  deletionTimestamp: "2026-01-02T02:30:00Z"
  deletionGracePeriodSeconds: 0
  selfLink: /apis/sparkoperator.k8s.io/v1beta2/namespaces/data/sparkapplications/etl
  managedFields: [{manager: kubectl, operation: Update}]`
	t.Run("kept and dropped", func(t *testing.T) {
		r := convertOne(t, sparkApp(meta), Options{})
		wantFindings(t, r.Findings, nil)
		wf := r.Object.(*wfv1.Workflow)
		if wf.Namespace != "data" || !cmp.Equal(wf.Labels, map[string]string{"app": "etl", "team": "data"}) || !cmp.Equal(wf.Annotations, map[string]string{"owner": "data-platform"}) {
			t.Errorf("namespace %q labels %v annotations %v", wf.Namespace, wf.Labels, wf.Annotations)
		}
		if wf.UID != "" || wf.ResourceVersion != "" || wf.Generation != 0 || !wf.CreationTimestamp.IsZero() || wf.DeletionTimestamp != nil || len(wf.ManagedFields) > 0 {
			t.Errorf("server-set metadata carried over: %+v", wf.ObjectMeta)
		}
	})
	tests := []struct {
		name, meta string
		findings   map[string]string
	}{
		{"owner", "\n  name: etl\n  ownerReferences: [{apiVersion: sparkoperator.k8s.io/v1beta2, kind: ScheduledSparkApplication, name: etl, uid: x}]",
			map[string]string{"metadata.ownerReferences": "dropped: the owners are the Spark operator's objects"}},
		{"finalizer", "\n  name: etl\n  finalizers: [sparkoperator.k8s.io/finalizer]", map[string]string{"metadata.finalizers": "dropped"}},
		{"unknown metadata", "\n  name: etl\n  clusterName: east", map[string]string{"metadata.clusterName": "not carried over"}},
		{"a label that is no string", "\n  name: etl\n  labels: {replicas: 3, app: etl}", map[string]string{"metadata.labels.replicas": "a number, not a string; ignored"}},
		{"labels that are no map", "\n  name: etl\n  labels: [a, b]", map[string]string{"metadata.labels": "a list, not a map of strings"}},
		{"a name that is no string", "\n  name: 42\n  generateName: etl-", map[string]string{"metadata.name": "a number, not a string"}},
		{"a name YAML reads as a boolean", "\n  name: no\n  generateName: etl-", map[string]string{"metadata.name": "a boolean, not a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantFindings(t, convertOne(t, sparkApp(tt.meta), Options{}).Findings, tt.findings)
		})
	}
}

// pluginBody is the spark body of the one template of obj.
func pluginBody(t *testing.T, obj Object) []byte {
	t.Helper()
	var spec *wfv1.WorkflowSpec
	switch o := obj.(type) {
	case *wfv1.Workflow:
		spec = &o.Spec
	case *wfv1.CronWorkflow:
		spec = &o.Spec.WorkflowSpec
	default:
		t.Fatalf("object %T", obj)
	}
	if spec.Entrypoint != TemplateName || len(spec.Templates) != 1 || spec.Templates[0].Name != TemplateName || spec.Templates[0].Plugin == nil {
		t.Fatalf("want one template %q, the entrypoint, with a plugin: %+v", TemplateName, spec)
	}
	var plugin map[string]json.RawMessage
	if err := json.Unmarshal(spec.Templates[0].Plugin.Value, &plugin); err != nil || len(plugin) != 1 {
		t.Fatalf("plugin %s: %v; want one key", spec.Templates[0].Plugin.Value, err)
	}
	return plugin[bodyspec.PluginName]
}

// sameJSON compares JSON values with numbers as written.
func sameJSON(t *testing.T, want, got []byte) string {
	t.Helper()
	decode := func(b []byte) any {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return v
	}
	return cmp.Diff(decode(want), decode(got))
}

// The body is the spec, value for value, also as written out in YAML:
// strings that look like numbers, numbers beyond float64's precision,
// nulls, empty objects, dotted and unicode keys.
func TestSpecCarriedUnchanged(t *testing.T) {
	spec := `
  type: Scala
  mode: cluster
  image: spark:3.5.3
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
  arguments: ["1000", "0.1", "true", "null", "", "ünïcödé", "--conf=a=b"]
  sparkConf:
    spark.sql.shuffle.partitions: "64"
    spark.executor.extraJavaOptions: -Dlog4j.configuration=file:/opt/log4j.properties -XX:+UseG1GC
    "spark.hadoop.fs.s3a.path.style.access": "true"
  hadoopConf: {}
  timeToLiveSeconds: 9007199254740993
  memoryOverheadFactor: "0.25"
  driver:
    cores: 1
    coreLimit: 1200m
    memory: 512m
    serviceAccount: spark
    labels: {version: 3.5.3}
    env: [{name: GREETING, value: "hello: world"}]
    annotations: null
  executor:
    instances: 2
    memory: 1g`
	doc := "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: pi}\nspec:" + spec + "\n"
	r := convertOne(t, doc, Options{})
	wantSpec, err := yaml.YAMLToJSON([]byte(strings.ReplaceAll(spec, "\n  ", "\n")))
	if err != nil {
		t.Fatal(err)
	}
	wantSpec = withAppNameJSON(t, wantSpec, "pi")
	if diff := sameJSON(t, wantSpec, pluginBody(t, r.Object)); diff != "" {
		t.Errorf("body differs from the spec (-spec +body):\n%s", diff)
	}
	// And once written as YAML and read back, as a user gets it.
	out, err := Marshal(r.Object)
	if err != nil {
		t.Fatal(err)
	}
	back := convertOneKind(t, out)
	if diff := sameJSON(t, wantSpec, pluginBody(t, back)); diff != "" {
		t.Errorf("written body differs from the spec (-spec +written):\n%s", diff)
	}
}

// convertOneKind decodes a written Workflow.
func convertOneKind(t *testing.T, out []byte) Object {
	t.Helper()
	wf := &wfv1.Workflow{}
	if err := yaml.UnmarshalStrict(out, wf); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return wf
}

func TestSparkBodyFindings(t *testing.T) {
	tests := []struct {
		name, doc string
		wantObj   bool
		findings  map[string]string
	}{
		{"SparkApplication: paths under spec", strings.Replace(sparkApp("\n  name: pi"), "serviceAccount: spark", "serviceAccount: spark\n    memroy: 1g\n    memory: 12zz", 1), true, map[string]string{
			"spec.driver.memroy": `the plugin would fail the step: Invalid value: "1g": unknown field "memroy"; did you mean "memory"?`,
			"spec.driver.memory": `the plugin would fail the step: Invalid value: "12zz": is not a Kubernetes quantity or Spark size`,
		}},
		{"ScheduledSparkApplication: paths under spec.template", strings.Replace(scheduled("  schedule: \"@daily\"\n  concurrencyPolicy: Forbid"), "serviceAccount: spark", "serviceAccount: spark\n      podName: mine", 1), true, map[string]string{
			"spec.template.driver.podName": "the plugin would fail the step: Forbidden: not supported yet by sparkplug",
		}},
		{"no spec: an empty body, reported once", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: pi}\n", true, map[string]string{
			"spec": "missing: the spark body is empty, the plugin would fail the step",
		}},
		{"a spec that is no object: skipped", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: pi}\nspec: [a]\n", false, map[string]string{
			"spec": "a list, not an object; skipped",
		}},
		{"no template", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: nn}\nspec: {schedule: '@daily', concurrencyPolicy: Forbid}\n", true, map[string]string{
			"spec.template": "missing: the spark body is empty",
		}},
		{"a ScheduledSparkApplication without spec", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: nn}\n", false, map[string]string{
			"spec": "missing: no schedule and no template; skipped",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := convertOne(t, tt.doc, Options{})
			wantFindings(t, r.Findings, tt.findings)
			if (r.Object != nil) != tt.wantObj {
				t.Errorf("object %v, want one: %v", r.Object, tt.wantObj)
			}
		})
	}
}

func TestScheduleMapping(t *testing.T) {
	tests := []struct {
		name, fields  string
		wantSchedules []string
		wantTimezone  string
		findings      map[string]string
	}{
		{"cron and timeZone", `  schedule: "30 2 * * *"
  timeZone: Europe/Berlin`, []string{"30 2 * * *"}, "Europe/Berlin", nil},
		{"no zone: both the controller's", `  schedule: "30 2 * * *"`, []string{"30 2 * * *"}, "", nil},
		{"descriptor", `  schedule: "@hourly"`, []string{"@hourly"}, "", nil},
		{"CRON_TZ prefix becomes the timezone", `  schedule: "CRON_TZ=Asia/Tokyo 0 9 * * 1-5"`, []string{"0 9 * * 1-5"}, "Asia/Tokyo", nil},
		{"TZ prefix too", `  schedule: "TZ=UTC @hourly"`, []string{"@hourly"}, "UTC", nil},
		{"prefix and the same timeZone", `  schedule: "CRON_TZ=Asia/Tokyo 0 9 * * *"
  timeZone: Asia/Tokyo`, []string{"0 9 * * *"}, "Asia/Tokyo", nil},
		{"prefix and another timeZone: the operator reads the prefix", `  schedule: "CRON_TZ=Asia/Tokyo 0 9 * * *"
  timeZone: Europe/Berlin`, []string{"0 9 * * *"}, "Asia/Tokyo", map[string]string{
			"spec.timeZone": `"Europe/Berlin" is ignored by the Spark operator, as spec.schedule starts with its own zone; the CronWorkflow's timezone is "Asia/Tokyo"`}},
		{"@every 3m: the same rate on the clock", `  schedule: "@every 3m"`, []string{"*/3 * * * *"}, "", map[string]string{
			"spec.schedule": `"@every 3m" became schedules "*/3 * * * *": Argo's controller adds a CronWorkflow's schedules anew`}},
		{"@every 90m: two schedules", `  schedule: "@every 90m"`, []string{"0 */3 * * *", "30 1-23/3 * * *"}, "", map[string]string{
			"spec.schedule": `became schedules "0 */3 * * *", "30 1-23/3 * * *"`}},
		{"@every 2h in a zone with daylight saving", `  schedule: "@every 2h"
  timeZone: Europe/Berlin`, []string{"0 */2 * * *"}, "Europe/Berlin", map[string]string{
			"spec.schedule": "they are read in Europe/Berlin, where daylight saving skips or repeats some local times"}},
		{"@every 7m: kept", `  schedule: "@every 7m"`, []string{"@every 7m"}, "", map[string]string{
			"spec.schedule": `"@every 7m" kept, but Argo's controller adds a CronWorkflow's schedules anew`}},
		{"malformed: written, reported", `  schedule: "0 25 * * *"`, []string{"0 25 * * *"}, "", map[string]string{
			"spec.schedule": `Argo refuses the CronWorkflow: cron schedule "0 25 * * *" is malformed: end of range (25) above maximum (23)`}},
		{"unknown timeZone", `  schedule: "0 2 * * *"
  timeZone: Europe/Berln`, []string{"0 2 * * *"}, "Europe/Berln", map[string]string{
			"spec.timeZone": `Argo refuses the CronWorkflow: invalid timezone "Europe/Berln"`}},
		{"unknown zone in the prefix", `  schedule: "CRON_TZ=Mars/Olympus 0 2 * * *"`, []string{"0 2 * * *"}, "Mars/Olympus", map[string]string{
			"spec.schedule": `invalid timezone "Mars/Olympus"`}},
		{"both malformed", `  schedule: "61 * * * *"
  timeZone: Nowhere`, []string{"61 * * * *"}, "Nowhere", map[string]string{
			"spec.schedule": "is malformed", "spec.timeZone": `invalid timezone "Nowhere"`}},
		{"two prefixes", `  schedule: "CRON_TZ=UTC CRON_TZ=Asia/Tokyo 0 9 * * *"`, []string{"CRON_TZ=Asia/Tokyo 0 9 * * *"}, "UTC", map[string]string{
			"spec.schedule": "names its own time zone"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := convertOne(t, scheduled(tt.fields+"\n  concurrencyPolicy: Forbid"), Options{})
			wantFindings(t, r.Findings, tt.findings)
			cw := r.Object.(*wfv1.CronWorkflow)
			if !cmp.Equal(cw.Spec.Schedules, tt.wantSchedules) || cw.Spec.Timezone != tt.wantTimezone || cw.Spec.Schedule != "" {
				t.Errorf("schedules %q timezone %q (schedule %q); want %q, %q", cw.Spec.Schedules, cw.Spec.Timezone, cw.Spec.Schedule, tt.wantSchedules, tt.wantTimezone)
			}
		})
	}
	t.Run("no schedule: skipped", func(t *testing.T) {
		r := convertOne(t, scheduled("  concurrencyPolicy: Forbid"), Options{})
		wantFindings(t, r.Findings, map[string]string{"spec.schedule": "missing or not a string: a CronWorkflow needs a schedule; skipped"})
		if r.Object != nil {
			t.Errorf("object %v, want none", r.Object)
		}
	})
}

func TestScheduleFields(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	tests := []struct {
		name, fields     string
		policy           wfv1.ConcurrencyPolicy
		suspend          bool
		success, failure *int32
		findings         map[string]string
	}{
		{"Allow", "  concurrencyPolicy: Allow", wfv1.AllowConcurrent, false, i32(1), i32(1), nil},
		{"Forbid", "  concurrencyPolicy: Forbid", wfv1.ForbidConcurrent, false, i32(1), i32(1), nil},
		{"Replace", "  concurrencyPolicy: Replace", wfv1.ReplaceConcurrent, false, i32(1), i32(1), nil},
		{"no policy", "", "", false, i32(1), i32(1), map[string]string{
			"spec.concurrencyPolicy": "not set: the Spark operator then starts a run only while no earlier run's SparkApplication exists"}},
		{"a policy Argo refuses", "  concurrencyPolicy: forbid", "", false, i32(1), i32(1), map[string]string{
			"spec.concurrencyPolicy": `"forbid" is not Allow, Forbid or Replace`}},
		{"a policy that is no string", "  concurrencyPolicy: 1", "", false, i32(1), i32(1), map[string]string{
			"spec.concurrencyPolicy": "a number, not a string"}},
		{"suspend", "  concurrencyPolicy: Forbid\n  suspend: true", wfv1.ForbidConcurrent, true, i32(1), i32(1), nil},
		{"suspend false", "  concurrencyPolicy: Forbid\n  suspend: false", wfv1.ForbidConcurrent, false, i32(1), i32(1), nil},
		{"suspend that is no boolean", "  concurrencyPolicy: Forbid\n  suspend: \"yes\"", wfv1.ForbidConcurrent, false, i32(1), i32(1), map[string]string{
			"spec.suspend": "a string, not a boolean"}},
		{"history limits", "  concurrencyPolicy: Forbid\n  successfulRunHistoryLimit: 3\n  failedRunHistoryLimit: 5", wfv1.ForbidConcurrent, false, i32(3), i32(5), nil},
		{"history limits of 0", "  concurrencyPolicy: Forbid\n  successfulRunHistoryLimit: 0\n  failedRunHistoryLimit: 0", wfv1.ForbidConcurrent, false, i32(0), i32(0), nil},
		{"limits that are no counts", "  concurrencyPolicy: Forbid\n  successfulRunHistoryLimit: -1\n  failedRunHistoryLimit: 1.5", wfv1.ForbidConcurrent, false, i32(1), i32(1), map[string]string{
			"spec.successfulRunHistoryLimit": "-1 is not a count of runs; the operator's default, 1, is used",
			"spec.failedRunHistoryLimit":     "1.5 is not a count of runs"}},
		{"a field the operator does not have", "  concurrencyPolicy: Forbid\n  startingDeadlineSeconds: 60", wfv1.ForbidConcurrent, false, i32(1), i32(1), map[string]string{
			"spec.startingDeadlineSeconds": "not a field of a ScheduledSparkApplication; not carried over"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := convertOne(t, scheduled("  schedule: \"@daily\"\n"+tt.fields), Options{})
			wantFindings(t, r.Findings, tt.findings)
			s := r.Object.(*wfv1.CronWorkflow).Spec
			if s.ConcurrencyPolicy != tt.policy || s.Suspend != tt.suspend || !cmp.Equal(s.SuccessfulJobsHistoryLimit, tt.success) || !cmp.Equal(s.FailedJobsHistoryLimit, tt.failure) {
				t.Errorf("policy %q suspend %v limits %v/%v; want %q %v %v/%v", s.ConcurrencyPolicy, s.Suspend, *s.SuccessfulJobsHistoryLimit, *s.FailedJobsHistoryLimit,
					tt.policy, tt.suspend, *tt.success, *tt.failure)
			}
			if s.StartingDeadlineSeconds != nil || s.StopStrategy != nil || s.When != "" {
				t.Errorf("Argo-only fields set: %+v", s)
			}
		})
	}
}

// The operator puts the ScheduledSparkApplication's labels on each run;
// Argo puts workflowMetadata's. Annotations stay on the CronWorkflow.
func TestRunsGetTheLabels(t *testing.T) {
	doc := strings.Replace(scheduled("  schedule: \"@daily\"\n  concurrencyPolicy: Forbid"), "  name: nightly", "  name: nightly\n  labels: {app: etl}\n  annotations: {owner: data}", 1)
	cw := convertOne(t, doc, Options{}).Object.(*wfv1.CronWorkflow)
	if cw.Spec.WorkflowMetadata == nil || !cmp.Equal(cw.Spec.WorkflowMetadata.Labels, map[string]string{"app": "etl"}) || cw.Spec.WorkflowMetadata.Annotations != nil {
		t.Errorf("workflowMetadata %+v; want labels app: etl only", cw.Spec.WorkflowMetadata)
	}
	if !cmp.Equal(cw.Labels, map[string]string{"app": "etl"}) || !cmp.Equal(cw.Annotations, map[string]string{"owner": "data"}) {
		t.Errorf("labels %v annotations %v", cw.Labels, cw.Annotations)
	}
	plain := convertOne(t, scheduled("  schedule: \"@daily\"\n  concurrencyPolicy: Forbid"), Options{}).Object.(*wfv1.CronWorkflow)
	if plain.Spec.WorkflowMetadata != nil {
		t.Errorf("workflowMetadata %+v without labels", plain.Spec.WorkflowMetadata)
	}
}

func TestSkippedAndReported(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []Finding
	}{
		{"another kind", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", []Finding{{Path: "kind", Message: "a ConfigMap (v1), not a SparkApplication or ScheduledSparkApplication of sparkoperator.k8s.io/v1beta2; skipped"}}},
		{"another version", "apiVersion: sparkoperator.k8s.io/v1beta1\nkind: ScheduledSparkApplication\nmetadata: {name: c}\n", []Finding{{Path: "apiVersion", Message: "ScheduledSparkApplication v1beta1 is not sparkoperator.k8s.io/v1beta2"}}},
		{"apache's operator", "apiVersion: spark.apache.org/v1\nkind: SparkApplication\nmetadata: {name: c}\n", []Finding{{Path: "kind", Message: "a SparkApplication (spark.apache.org/v1), not a SparkApplication or ScheduledSparkApplication of sparkoperator.k8s.io/v1beta2"}}},
		{"no kind", "metadata: {name: c}\n", []Finding{{Path: "", Message: "no apiVersion and kind: not a Kubernetes object; skipped"}}},
		{"a scalar", "just text\n", []Finding{{Path: "", Message: "a string, not a Kubernetes object; skipped"}}},
		{"duplicate fields", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nkind: SparkApplication\n", []Finding{{Path: "", Message: "not valid YAML, skipped"}}},
		{"broken YAML", "apiVersion: [\n", []Finding{{Path: "", Message: "not valid YAML, skipped"}}},
		{"status and an unknown top-level field", sparkApp("\n  name: pi") + "status: {applicationState: {state: COMPLETED}}\nextra: 1\n", []Finding{
			{Path: "status", Message: "dropped: the Spark operator's record of the application's state, attempts and driver does not carry over"},
			{Path: "extra", Message: "not a field of a SparkApplication; not carried over"}}},
		{"an empty status is no finding", sparkApp("\n  name: pi") + "status: {}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := convertOne(t, tt.doc, Options{ServiceAccount: "spark-workflows"})
			if len(r.Findings) != len(tt.want) {
				t.Fatalf("findings %v, want %v", r.Findings, tt.want)
			}
			for i, w := range tt.want {
				if got := r.Findings[i]; got.Path != w.Path || !strings.Contains(got.Message, w.Message) {
					t.Errorf("finding %d = %s, want %s", i, got, w)
				}
			}
		})
	}
}

func TestDocumentsAndLists(t *testing.T) {
	input := "# comments only\n---\n" + sparkApp("\n  name: a") + "---\n" +
		"apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(sparkApp("\n  name: b"), "\n"), "\n", "\n  ") + "\n- 42\n" +
		"---\n---\n" + sparkApp("\n  name: c")
	results := Convert([]byte(input), Options{})
	type where struct {
		doc, line, item int
		name            string
		converted       bool
	}
	var got []where
	for _, r := range results {
		got = append(got, where{r.Document, r.Line, r.Item, r.Name, r.Object != nil})
	}
	want := []where{{2, 3, -1, "a", true}, {3, 16, 0, "b", true}, {3, 16, 1, "", false}, {4, 34, -1, "c", true}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(where{})); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestMarshalLeavesOutWhatANewObjectHasEmpty(t *testing.T) {
	doc := "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: nn}\n" +
		"spec:\n  schedule: '@daily'\n  concurrencyPolicy: Forbid\n  template:" + strings.ReplaceAll(goodSpec, "\n", "\n  ") + "\n    sparkConf: {}\n    proxyUser: null\n"
	r := convertOne(t, doc, Options{})
	out, err := Marshal(r.Object)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, absent := range []string{"status", "creationTimestamp", "arguments", "inputs", "outputs", "metadata: {}"} {
		if strings.Contains(text, absent) {
			t.Errorf("written CronWorkflow has %q:\n%s", absent, text)
		}
	}
	for _, kept := range []string{"sparkConf: {}", "proxyUser: null"} {
		if !strings.Contains(text, kept) {
			t.Errorf("the spark body lost %q:\n%s", kept, text)
		}
	}
	cw := &wfv1.CronWorkflow{}
	if err := yaml.UnmarshalStrict(out, cw); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r.Object, cw); diff != "" {
		t.Errorf("written and read back, the CronWorkflow differs (-converted +read):\n%s", diff)
	}
}

// inputObject is the object a result came from, decoded on its own.
func inputObject(t *testing.T, data []byte, r Result) map[string]any {
	t.Helper()
	docs := splitDocuments(data)
	tree, err := decode(docs[r.Document-1].raw)
	if err != nil {
		t.Fatal(err)
	}
	obj := tree.(map[string]any)
	if r.Item >= 0 {
		obj = obj["items"].([]any)[r.Item].(map[string]any)
	}
	return obj
}
