//go:build tools

// Package tools pins the Kubernetes control plane (kube-apiserver,
// kube-controller-manager, kube-scheduler) and kubectl used by the
// integration and e2e clusters. It is never compiled into sparkplug:
// hack/tools.sh builds the four binaries from this module.
//
// k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces
// them with ./staging paths that do not exist outside its repository, so
// go.mod replaces each of them with the published v0.33.x release.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
