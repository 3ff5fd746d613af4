package convert

import wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

// OperatorServiceAccount is the ServiceAccount the Spark operator's Helm
// chart makes for Spark's pods (spark.serviceAccount, named
// <release>-spark; the chart's own examples use the release
// spark-operator). It goes when the operator is uninstalled.
const OperatorServiceAccount = "spark-operator-spark"

// operatorServiceAccounts reports each field of the body at path that
// runs a pod as OperatorServiceAccount: its pods would not be created once
// the operator is uninstalled, however well they ran the day they moved.
func operatorServiceAccounts(path string, body map[string]any, f *findings) {
	for _, role := range []string{"driver", "executor"} {
		r, _ := body[role].(map[string]any)
		if r == nil {
			continue
		}
		fields := map[string]any{role + ".serviceAccount": r["serviceAccount"]}
		if tmpl, ok := r["template"].(map[string]any); ok {
			if spec, ok := tmpl["spec"].(map[string]any); ok {
				fields[role+".template.spec.serviceAccountName"] = spec["serviceAccountName"]
			}
		}
		for _, field := range sortedKeys(fields) {
			if fields[field] != OperatorServiceAccount {
				continue
			}
			f.add(path+"."+field, "%q is the ServiceAccount the Spark operator's Helm chart makes (spark.serviceAccount), which helm uninstall deletes with the operator: the %s would then not be created. Create a ServiceAccount of your own in the namespace, bound to a Role like the chart's (pods, services, configmaps, persistentvolumeclaims), and name it in this field", OperatorServiceAccount, map[string]string{"driver": "driver pod", "executor": "executor pods"}[role])
		}
	}
}

// serviceAccount sets the serviceAccountName of obj's Workflow spec to
// name. With none, it reports that the runs use the namespace's default
// ServiceAccount: the Spark operator needed no account for the
// SparkApplication itself, Argo's agent pod does.
func serviceAccount(obj Object, name string, f *findings) {
	spec, runs := (*wfv1.WorkflowSpec)(nil), "the Workflow runs"
	switch o := obj.(type) {
	case *wfv1.CronWorkflow:
		spec, runs = &o.Spec.WorkflowSpec, "each run of the CronWorkflow runs"
	case *wfv1.Workflow:
		spec = &o.Spec
	}
	if name != "" {
		spec.ServiceAccountName = name
		return
	}
	f.advise("", "no serviceAccountName (--service-account): %s as the namespace's default ServiceAccount, "+
		"and so does its Argo agent pod, which needs Argo's agent rights (list and watch workflowtasksets, patch workflowtasksets/status; "+
		"the chart's agentRBAC grants them to default); give --service-account NAME to run as another", runs)
}
