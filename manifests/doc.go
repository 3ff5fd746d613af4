// Package manifests holds no code: it tests what users install. The YAML
// next to it is the install (see README.md there): the plugin ConfigMap
// generated from ../plugin.yaml, the plugin's ServiceAccount, token Secret,
// Role and RoleBinding (rbac.yaml), and controller/, the patch that turns
// executor plugins on in Argo's workflow-controller; and chart/sparkplug,
// the Helm chart that installs the same ConfigMap and RBAC into each job
// namespace.
//
// The unit tests decode ../plugin.yaml with Argo's own types and run its
// Validate, tie the sidecar's port, user and image to what `sparkplug serve`
// and the image expect, and pin the Role, verb for verb, to what the
// plugin and the spark-submit it runs call. The integration tests (build
// tag integration) build the kustomization with the pinned kubectl, apply
// it to a real API server with server-side apply, and ask the API server
// what the ServiceAccount may do, and build a kustomize overlay that
// replaces the sidecar's container. The chart tests (build tag chart, make
// test-chart) run the pinned helm (hack/helm.sh): lint, golden helm
// template output under chart/testdata, and the chart's plugin ConfigMap
// and Role against the generated ConfigMap and rbac.yaml, so least
// privilege is written down once. The chart README's values table is
// generated from values.schema.json and values.yaml by a golden test that
// needs no helm (make update writes it, make verify checks it).
package manifests
