package convert_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/convert"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// The Spark operator has no field for event logs or the History Server:
// its users write spark.eventLog.* (and, next to them, the History
// Server's spark.history.fs.logDirectory) in sparkConf. convert carries
// every such key over unchanged, reports nothing about them, and the
// plugin writes each into the run's spark.properties as it is, so the
// History Server finds the converted runs' logs where it found the
// operator's.
func TestEventLogConfCarriesOver(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "eventlog.input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	wantConf := []map[string]string{
		{
			"spark.eventLog.enabled": "true", "spark.eventLog.dir": "s3a://spark-events/data",
			"spark.eventLog.rolling.enabled": "true", "spark.eventLog.rolling.maxFileSize": "128m", "spark.eventLog.compress": "true",
			"spark.history.fs.logDirectory": "s3a://spark-events/data", "spark.hadoop.fs.s3a.endpoint": "http://minio.storage.svc:9000",
			// the SparkApplication's name, as the operator's spark-submit --name
			"spark.app.name": "etl-with-history",
		},
		{
			"spark.eventLog.enabled": "true", "spark.eventLog.dir": "hdfs://namenode:8020/spark-logs",
			"spark.history.fs.logDirectory": "hdfs://namenode:8020/spark-logs",
		},
	}
	results := convert.Convert(data, convert.Options{ServiceAccount: "spark-workflows"})
	if len(results) != len(wantConf) {
		t.Fatalf("%d results, want %d", len(results), len(wantConf))
	}
	for i, r := range results {
		findings := slices.DeleteFunc(slices.Clone(r.Findings), func(f convert.Finding) bool {
			return f.Advice // missed runs: every ScheduledSparkApplication's
		})
		if len(findings) > 0 || r.Object == nil {
			t.Fatalf("%s %s: findings %v; want it converted with nothing else to report", r.Kind, r.Name, findings)
		}
		// As a user gets it: written out, read back.
		out, err := convert.Marshal(r.Object)
		if err != nil {
			t.Fatal(err)
		}
		body := writtenBody(t, r.Kind, out)
		s, err := spec.Parse(body)
		if err != nil {
			t.Fatalf("%s %s: the plugin refuses the body: %v", r.Kind, r.Name, err)
		}
		props := objects.Properties(s, objects.Run{Workflow: spark.WorkflowRef{Name: "wf", Namespace: "data", UID: "uid-1"}, NodeID: "wf-1", Attempt: 1})
		for k, v := range wantConf[i] {
			if s.SparkConf[k] != v {
				t.Errorf("%s %s: body sparkConf[%s] = %q, want %q as written", r.Kind, r.Name, k, s.SparkConf[k], v)
			}
			if props[k] != v {
				t.Errorf("%s %s: spark.properties %s = %q, want %q", r.Kind, r.Name, k, props[k], v)
			}
		}
		if len(s.SparkConf) != len(wantConf[i]) {
			t.Errorf("%s %s: sparkConf %v, want exactly %v", r.Kind, r.Name, s.SparkConf, wantConf[i])
		}
	}
}

// writtenBody is the spark body of the one template of a written
// Workflow or CronWorkflow.
func writtenBody(t *testing.T, kind string, out []byte) []byte {
	t.Helper()
	var templates []wfv1.Template
	switch kind {
	case convert.KindSparkApplication:
		var wf wfv1.Workflow
		if err := yaml.UnmarshalStrict(out, &wf); err != nil {
			t.Fatal(err)
		}
		templates = wf.Spec.Templates
	default:
		var cw wfv1.CronWorkflow
		if err := yaml.UnmarshalStrict(out, &cw); err != nil {
			t.Fatal(err)
		}
		templates = cw.Spec.WorkflowSpec.Templates
	}
	if len(templates) != 1 || templates[0].Plugin == nil {
		t.Fatalf("templates %+v; want one plugin template", templates)
	}
	var plugin map[string]json.RawMessage
	if err := json.Unmarshal(templates[0].Plugin.Value, &plugin); err != nil {
		t.Fatal(err)
	}
	return plugin[spec.PluginName]
}
