package objects

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// appIDPattern is an application id as NamesFor makes it.
var appIDPattern = regexp.MustCompile(`^spark-[0-9a-f]{32}$`)

// The driver pod and the executors' conf carry the Spark operator's
// app-name and submission-id labels, with the values of spark-app-name and
// of the attempt's application id, in both deploy modes, and never
// launched-by-spark-operator.
func TestOperatorLabels(t *testing.T) {
	b := newBuilder(t)
	for _, tc := range []struct {
		input, run string
		appName    string // the spark-app-name and sparkoperator.k8s.io/app-name value
	}{
		{"spark-pi", "default", "nightly-etl-x7k2p-50afb368"},            // no spark.app.name: the prefix
		{"kitchen-sink", "kitchen-sink", "nightly-etl"},                  // spark.app.name "Nightly ETL"
		{"client-mode", "default", "nightly-etl-x7k2p-50afb368"},         // client mode: spark-defaults.conf
		{"kube-scheduler", "default", "nightly-etl-x7k2p-50afb368"},      // with a PodGroup
		{"driver-ingress", "default", "nightly-etl-x7k2p-50afb368"},      // with Services and Ingresses
		{"monitoring", "default", "nightly-etl-x7k2p-50afb368"},          // with the metrics files
		{"pod-templates", "default", "nightly-etl-x7k2p-50afb368"},       // the body's pod templates
		{"ui-ingress", "default", "nightly-etl-x7k2p-50afb368"},          // the UI Service and Ingress
		{"yunikorn", "default", "nightly-etl-x7k2p-50afb368"},            // a batch scheduler's labels
		{"volcano", "default", "nightly-etl-x7k2p-50afb368"},             // and a PodGroup of its own
		{"pyspark", "default", "nightly-etl-x7k2p-50afb368"},             // a Python application
		{"client-mode-ingress", "default", "nightly-etl-x7k2p-50afb368"}, // client mode's UI Ingress
	} {
		t.Run(tc.input, func(t *testing.T) {
			s := readBody(t, "testdata/"+tc.input+".input.yaml")
			r := goldenRuns[tc.run]
			objs, err := b.Build(s, r)
			if err != nil {
				t.Fatal(err)
			}
			n := NamesFor(r)
			if !appIDPattern.MatchString(n.AppID) {
				t.Fatalf("application id %q, want spark-<32 hex>", n.AppID)
			}
			want := map[string]string{
				spark.LabelOperatorAppName:      tc.appName,
				spark.LabelOperatorSubmissionID: n.AppID,
			}
			d := objs.Driver.Labels
			if d[spark.LabelAppName] != tc.appName || d[spark.LabelAppSelector] != n.AppID {
				t.Errorf("driver's Spark labels %s=%q %s=%q, want %q and %q", spark.LabelAppName, d[spark.LabelAppName],
					spark.LabelAppSelector, d[spark.LabelAppSelector], tc.appName, n.AppID)
			}
			c := Properties(s, r)
			for k, v := range want {
				if d[k] != v {
					t.Errorf("driver label %s=%q, want %q", k, d[k], v)
				}
				if got := c[spark.ConfExecutorLabelPrefix+k]; got != v {
					t.Errorf("conf %s%s=%q, want %q", spark.ConfExecutorLabelPrefix, k, got, v)
				}
				// What the driver reads: spark.properties, or
				// spark-defaults.conf in client mode.
				line := spark.ConfExecutorLabelPrefix + k + "=" + v + "\n"
				if !strings.Contains(objs.ConfigMap.Data[spark.PropertiesFile]+objs.ConfigMap.Data[spark.ClientDefaultsFile], line) {
					t.Errorf("the run's ConfigMap lacks %q", line)
				}
			}
			if _, ok := c[spark.ConfDriverLabelPrefix+spark.LabelOperatorAppName]; ok {
				t.Errorf("conf sets the driver's %s: the driver pod carries it", spark.LabelOperatorAppName)
			}
			noLaunchedBy(t, objs)
		})
	}
}

// noLaunchedBy: nothing built for a run, nor its conf, mentions the
// operator's launched-by-spark-operator label, by which the operator takes
// pods for its own.
func noLaunchedBy(t *testing.T, objs *Set) {
	t.Helper()
	all := []any{objs.Driver, objs.ConfigMap, objs.Service}
	for _, o := range objs.Extra {
		all = append(all, o)
	}
	if objs.PodGroup != nil {
		all = append(all, objs.PodGroup)
	}
	for _, o := range all {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "launched-by-spark-operator") {
			t.Errorf("%T carries launched-by-spark-operator: %s", o, raw)
		}
	}
}

// submission-id is one per attempt: the same for a run built again, other
// for the next attempt and for another node.
func TestOperatorSubmissionIDIsPerAttempt(t *testing.T) {
	b := newBuilder(t)
	s := body(t)
	r := goldenRuns["default"]
	id := func(r Run) string {
		t.Helper()
		objs, err := b.Build(s, r)
		if err != nil {
			t.Fatal(err)
		}
		got := objs.Driver.Labels[spark.LabelOperatorSubmissionID]
		if exec := Properties(s, r)[spark.ConfExecutorLabelPrefix+spark.LabelOperatorSubmissionID]; exec != got {
			t.Errorf("executors' submission-id %q, driver's %q", exec, got)
		}
		return got
	}
	first := id(r)
	if first == "" || id(r) != first {
		t.Fatalf("submission-id %q, then %q for the same attempt", first, id(r))
	}
	if next := id(with(r, func(r *Run) { r.Attempt = 2 })); next == first || next == "" {
		t.Errorf("attempt 2's submission-id %q, attempt 1's %q: want one per attempt", next, first)
	}
	if other := id(with(r, func(r *Run) { r.NodeID += "-other" })); other == first {
		t.Errorf("another node's submission-id is %q too", other)
	}
}

// The operator's labels in the body's sparkConf do not reach the pods:
// sparkplug's values win (validation refuses them first).
func TestOperatorLabelsWinOverTheBodys(t *testing.T) {
	s := body(t)
	s.SparkConf = map[string]string{
		spark.ConfExecutorLabelPrefix + spark.LabelOperatorAppName:      "other-app",
		spark.ConfExecutorLabelPrefix + spark.LabelOperatorSubmissionID: "other-submission",
		spark.ConfDriverLabelPrefix + spark.LabelOperatorAppName:        "other-app",
		spark.ConfDriverLabelPrefix + spark.LabelOperatorSubmissionID:   "other-submission",
	}
	r := goldenRuns["default"]
	objs, err := newBuilder(t).Cluster(s, r)
	if err != nil {
		t.Fatal(err)
	}
	n := NamesFor(r)
	c := Properties(s, r)
	for k, v := range map[string]string{spark.LabelOperatorAppName: n.Prefix, spark.LabelOperatorSubmissionID: n.AppID} {
		if objs.Driver.Labels[k] != v {
			t.Errorf("driver label %s=%q, want sparkplug's %q", k, objs.Driver.Labels[k], v)
		}
		if got := c[spark.ConfExecutorLabelPrefix+k]; got != v {
			t.Errorf("conf %s%s=%q, want sparkplug's %q", spark.ConfExecutorLabelPrefix, k, got, v)
		}
	}
}
