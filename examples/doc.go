// Package examples holds the Workflows, WorkflowTemplates and CronWorkflows
// users copy (the YAML files next to this one) and the tests that keep them
// valid; it has no Go code of its own.
//
// The unit tests decode every document strictly into Argo's types, follow
// every template a Workflow reaches (templateRef included), substitute
// parameters as Argo does, and run every spark body through spec.Parse and
// objects.Builder.Build: the path a real step takes. With -tags integration
// they create every document with a server-side dry run against Argo's full
// CRD schemas, and the driver pod, ConfigMap, Services and Ingresses each
// body builds against the API server's own validation.
//
// The examples carry nothing of sparkplug's own tests: users copy them as
// they are. How the e2e runner treats each file (run: submit it and
// expect it to succeed; skip, with the reason; the example files to apply
// first) is in e2e/testdata/examples-plan.yaml, which a unit test keeps
// in step with the files. The objects an example expects the user to have
// made (a ConfigMap, a claim, a node label) are in
// e2e/testdata/examples/<file>, applied before it runs. `sparkplug render
// -f` of every example gives no warning (render_test.go).
package examples
