// Package realnode runs Spark steps on a real kubelet (package node's real
// node: containerd, runc, CNI, CoreDNS): Argo's real agent pod with
// sparkplug's sidecar from the release image exactly as plugin.yaml ships
// it, drivers and executors of the Spark stand-in (package images) that
// find each other through their Service by DNS, container steps run by
// Argo's emissary, and failures in the kubelet's own words (OOMKilled,
// ErrImagePull), and pods of a probe image for what only a kubelet shows
// (cluster DNS, exit codes and termination messages, an OOM kill, a pull
// over plain HTTP). One environment serves the package's tests (TestMain),
// which also checks that stopping it leaves the host as it found it; they
// run only with SPARKPLUG_E2E_NODE=1 (make e2e-node), as root.
package realnode
