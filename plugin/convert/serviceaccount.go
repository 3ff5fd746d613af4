package convert

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
