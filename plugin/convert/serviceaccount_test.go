package convert

import (
	"strings"
	"testing"
)

// A pod run as the operator chart's ServiceAccount is reported at each
// field that names it, in a SparkApplication and a ScheduledSparkApplication;
// another ServiceAccount is not.
func TestOperatorServiceAccountIsReported(t *testing.T) {
	in := `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: a}
spec:
  type: Scala
  image: x:1
  mainClass: A
  mainApplicationFile: local:///a.jar
  driver: {serviceAccount: spark-operator-spark}
  executor: {serviceAccount: spark-operator-spark, template: {spec: {serviceAccountName: spark-operator-spark}}}
---
apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata: {name: b}
spec:
  schedule: "@daily"
  concurrencyPolicy: Forbid
  template:
    type: Scala
    image: x:1
    mainClass: A
    mainApplicationFile: local:///a.jar
    driver: {serviceAccount: spark-operator-spark}
---
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: c}
spec:
  type: Scala
  image: x:1
  mainClass: A
  mainApplicationFile: local:///a.jar
  driver: {serviceAccount: spark}
`
	want := [][]string{
		{"spec.driver.serviceAccount", "spec.executor.serviceAccount", "spec.executor.template.spec.serviceAccountName"},
		{"spec.template.driver.serviceAccount"},
		nil,
	}
	results := Convert([]byte(in), Options{})
	if len(results) != len(want) {
		t.Fatalf("%d results", len(results))
	}
	for i, r := range results {
		var got []string
		for _, f := range r.Findings {
			if strings.Contains(f.Message, "ServiceAccount the Spark operator's Helm chart makes") {
				got = append(got, f.Path)
				if !strings.Contains(f.Message, "helm uninstall deletes") || !strings.Contains(f.Message, "Create a ServiceAccount of your own") {
					t.Errorf("%s: %s", f.Path, f.Message)
				}
			}
		}
		if strings.Join(got, ",") != strings.Join(want[i], ",") {
			t.Errorf("%s: reported at %q, want %q", r.Name, got, want[i])
		}
	}
}
