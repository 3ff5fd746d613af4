// Package cluster runs a real Kubernetes control plane on 127.0.0.1 for the
// integration and e2e tests: etcd and kube-apiserver always, and on request
// kube-controller-manager (garbage collection, default ServiceAccounts),
// kube-scheduler and KWOK with one fake node (pods are scheduled and their
// lifecycle simulated by KWOK Stages; no container ever runs).
//
// The binaries come from hack/tools.sh (make tools), found through
// Options.BinDir or $SPARKPLUG_TOOLS_BIN. Start picks free loopback ports,
// keeps all state in a fresh temp dir, records every pid in <Dir>/pids and
// starts every process with Pdeathsig, so nothing outlives the test binary
// even when it panics; Stop terminates them in reverse order and removes
// the dir, and the next Start removes dirs left by killed test binaries.
//
// One cluster is shared by all tests of a test binary: see Main.
package cluster
