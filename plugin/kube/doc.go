// Package kube is the Kubernetes client setup the two long-running
// commands share, sparkplug serve (plugin/sidecar) and sparkplug monitor
// (plugin/monitor): the REST config from a kubeconfig or the in-cluster
// ServiceAccount, and readiness once the API server answers; and the one
// delete of a driver pod by its uid (DeletePod) the sweeps and cleanups
// make, kept here so that the packages that decide hold no client.
package kube
