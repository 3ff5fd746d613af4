package convert

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A SparkApplication's name becomes its body's spark.app.name, as the
// operator's spark-submit --name makes it the application's name, also
// over a sparkConf that says otherwise (with a note); the written YAML
// keeps the body's comments. generateName and a
// ScheduledSparkApplication's runs (named per run, by the operator as by
// Argo) get none.
func TestAppNameIsTheApplications(t *testing.T) {
	appName := func(t *testing.T, r Result) any {
		t.Helper()
		var body map[string]any
		if err := json.Unmarshal(pluginBody(t, r.Object), &body); err != nil {
			t.Fatal(err)
		}
		conf, _ := body["sparkConf"].(map[string]any)
		return conf["spark.app.name"]
	}
	const head = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\n"
	const body = "  type: Scala\n  image: spark:3.5.3\n  mainClass: A\n  mainApplicationFile: local:///a.jar\n  driver: {serviceAccount: spark}\n"

	r := convertOne(t, head+"metadata: {name: nightly-etl}\nspec:\n  # the job\n"+body, Options{ServiceAccount: "spark-workflows"})
	if got := appName(t, r); got != "nightly-etl" || len(r.Findings) != 0 {
		t.Errorf("no sparkConf: spark.app.name %v, findings %v; want nightly-etl, none", got, r.Findings)
	}
	out, err := MarshalResult(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "          sparkConf:\n            spark.app.name: nightly-etl\n") || !strings.Contains(string(out), "# the job") {
		t.Errorf("written:\n%s\nwant sparkConf's spark.app.name in the body, and its comment", out)
	}
	if back := convertOneKind(t, out); string(pluginBody(t, back)) != string(pluginBody(t, r.Object)) {
		t.Errorf("the written body reads back as %s, want %s", pluginBody(t, back), pluginBody(t, r.Object))
	}

	r = convertOne(t, head+"metadata: {name: nightly-etl}\nspec:\n"+body+"  sparkConf: {spark.app.name: ETL, spark.sql.shuffle.partitions: \"8\"}\n", Options{ServiceAccount: "spark-workflows"})
	if got := appName(t, r); got != "nightly-etl" || len(r.Findings) != 1 || r.Findings[0].Path != "spec.sparkConf" ||
		!strings.Contains(r.Findings[0].Message, `spark.app.name ETL, which the operator's spark-submit --name "nightly-etl" overrode`) || r.Fails() {
		t.Errorf("a sparkConf spark.app.name: %v, findings %+v; want nightly-etl and a note", got, r.Findings)
	}
	out, err = MarshalResult(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "ETL") || !strings.Contains(string(out), "spark.sql.shuffle.partitions") {
		t.Errorf("written:\n%s\nwant spark.app.name replaced, the other keys kept", out)
	}

	r = convertOne(t, head+"metadata: {generateName: etl-}\nspec:\n"+body, Options{ServiceAccount: "spark-workflows"})
	if got := appName(t, r); got != nil {
		t.Errorf("generateName: spark.app.name %v, want none (each run is named by the API server)", got)
	}

	scheduled := "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: nightly-etl}\n" +
		"spec:\n  schedule: \"@daily\"\n  template:\n" + strings.ReplaceAll(body, "  ", "    ")
	r = convertOne(t, scheduled, Options{ServiceAccount: "spark-workflows"})
	if r.Kind != KindScheduledSparkApplication || r.Object == nil {
		t.Fatalf("the ScheduledSparkApplication was not converted: %+v", r.Findings)
	}
	if got := appName(t, r); got != nil {
		t.Errorf("ScheduledSparkApplication: spark.app.name %v, want none (each run is named for its time)", got)
	}
}

// withAppNameJSON is the JSON object body with sparkConf's spark.app.name
// set to name: what convert adds to a SparkApplication's spec, as the
// operator's spark-submit --name does.
func withAppNameJSON(t *testing.T, body []byte, name string) []byte {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	conf, _ := m["sparkConf"].(map[string]any)
	if conf == nil {
		conf = map[string]any{}
		m["sparkConf"] = conf
	}
	conf["spark.app.name"] = name
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
