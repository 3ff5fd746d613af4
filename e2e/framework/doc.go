// Package framework brings up everything the e2e tests and `make demo`
// need, and gives tests a Given/When/Then fixture in the style of Argo's own
// test/e2e/fixtures.
//
// Start composes the parts: the control plane of package cluster (etcd,
// kube-apiserver, controller-manager, scheduler, KWOK driven by the Stages
// of e2e/stages), Argo (package argo: CRDs, the real workflow-controller,
// and a kubelet for agent pods that runs the real argoexec), the install
// users apply (`kubectl kustomize manifests/`, into one workflow namespace),
// the executor simulator of package sim, and the sparkplug binary built from
// this repository, run as Argo deploys it (Sidecars): the sidecar of each
// agent pod, with the args and env of the pod's container (the plugin
// ConfigMap's) and the token of the spark-executor-plugin ServiceAccount,
// stopped with SIGTERM when Argo deletes the pod. A workflow labelled
// FaultsLabel in spec.podMetadata has its sidecar reach the API server
// through the fault proxy of package faults. Only the inside of Spark's
// containers is simulated.
//
// One Env serves a whole test binary (TestMain) or one demo run. Tests
// share its namespace and tell their workflows apart by generated names.
package framework
