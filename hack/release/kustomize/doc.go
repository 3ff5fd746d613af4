// Command kustomize renders a kustomization directory as `kubectl
// kustomize DIR` does, with kustomize's own library (sigs.k8s.io/kustomize/api,
// krusty) instead of a kubectl binary:
//
//	go run ./hack/release/kustomize [-out FILE] DIR
//
// hack/release.sh renders the release's install bundles with it, so that a
// release needs no test control plane. The options are kubectl's defaults
// (`kubectl kustomize` with no flags): files only from within the
// kustomization's root, no plugins, no Helm, no managed-by label, and the
// order of resources kustomization.yaml's sortOptions ask for, else
// kustomize's legacy order (Namespaces, CRDs, RBAC, ... first). The module
// is the version kubectl v1.33 embeds (kustomize v5.6.0, api v0.19.0), the
// one go.mod's Kubernetes modules already pull in: the same inputs render
// the same bytes as the test control plane's kubectl.
package main
