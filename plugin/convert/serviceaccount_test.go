package convert

import (
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
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

// Without --service-account every Workflow runs as the namespace's
// default ServiceAccount, reported; with it, the Workflow, and each run of
// a CronWorkflow, runs as the account named, with nothing to report. A
// ScheduledSparkApplication's missed runs are reported either way: no
// field of the input says how late a run may still start.
func TestServiceAccountAndMissedRuns(t *testing.T) {
	app := convertOne(t, sparkApp("\n  name: pi"), Options{})
	wantFindings(t, app.Findings, map[string]string{"": "no serviceAccountName (--service-account): the Workflow runs as the namespace's default ServiceAccount"})
	if sa := app.Object.(*wfv1.Workflow).Spec.ServiceAccountName; sa != "" {
		t.Errorf("serviceAccountName %q without --service-account", sa)
	}
	app = convertOne(t, sparkApp("\n  name: pi"), Options{ServiceAccount: "spark-workflows"})
	if sa := app.Object.(*wfv1.Workflow).Spec.ServiceAccountName; sa != "spark-workflows" || len(app.Findings) != 0 {
		t.Errorf("serviceAccountName %q, findings %v; want spark-workflows, none", sa, app.Findings)
	}

	cron := convertOne(t, scheduled("  schedule: \"@daily\"\n  concurrencyPolicy: Forbid"), Options{})
	wantFindings(t, cron.Findings, map[string]string{
		"":     "each run of the CronWorkflow runs as the namespace's default ServiceAccount",
		"spec": "missed runs are no longer caught up",
	})
	cron = convertOne(t, scheduled("  schedule: \"@daily\"\n  concurrencyPolicy: Forbid"), Options{ServiceAccount: "spark-workflows"})
	if sa := cron.Object.(*wfv1.CronWorkflow).Spec.WorkflowSpec.ServiceAccountName; sa != "spark-workflows" {
		t.Errorf("CronWorkflow workflowSpec.serviceAccountName %q, want spark-workflows", sa)
	}
	wantFindings(t, cron.Findings, map[string]string{"spec": "startingDeadlineSeconds"})
}
