// Package node runs a real node beside KWOK's simulated one: containerd and
// runc (Debian's packages) as the CRI, the kubelet of the control plane's
// Kubernetes version, and CoreDNS as cluster DNS, all built and installed by
// hack/node.sh and run as host processes. It is for what only a kubelet
// shows (the release image under plugin.yaml's securityContext, mounts and
// limits, real exit codes, termination messages, OOM kills, image errors);
// KWOK stays the tool for scale.
//
// The recipe is the measured one of the design note real-node.md: a bridge
// cni0 (10.88.0.1/16) the kubelet, its API and CoreDNS bind; pods reach
// the API server, which listens on loopback, at the kubernetes Service's
// 10.96.0.1:443 through an iptables DNAT; CoreDNS answers cluster.local
// from the API server and forwards nothing. The node is tainted and
// labelled (Toleration, NodeSelector, OnNode) so that only pods meant for it
// land there. Images are built locally (WriteBinaryImage) and imported
// (ImportImage), or pulled over plain HTTP from a registry on loopback
// (TrustRegistry).
//
// It changes the host (needs root): Start records what it will change in
// its temp dir first, and Stop undoes it in real-node.md's order (pods and
// their containers, the kubelet, mounts, containerd, iptables chains,
// sysctls, the bridge). A test binary killed before Stop leaves that dir
// behind; the next Start finds it and undoes the changes then.
package node
