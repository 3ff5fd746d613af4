//go:build tools

// Package tools pins the kubelet of the e2e real node. hack/node.sh builds
// it from this module, at the same k8s.io/kubernetes version as the control
// plane of hack/tools/kubernetes, in a module of its own so adding it never
// changes the control plane's pins (and cache key).
//
// k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces
// them with ./staging paths that do not exist outside its repository, so
// go.mod replaces each of them with the published v0.33.x release, as
// hack/tools/kubernetes/go.mod does.
package tools

import _ "k8s.io/kubernetes/cmd/kubelet"
