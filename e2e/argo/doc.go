// Package argo runs Argo Workflows on the e2e control plane of package
// cluster: it installs Argo's CRDs and the workflow-controller's
// ConfigMap, runs the real workflow-controller with executor plugins
// enabled, and plays kubelet for Argo's agent pods, which KWOK marks
// Running but cannot run: for each agent pod it runs the real
// `argoexec agent main` as a local process with the pod's environment and
// the token of the pod's ServiceAccount, and, when AgentOptions.Sidecar
// says how, each of the pod's plugin sidecars: one process per pod and
// plugin, started before the agent, restarted when it fails (restartPolicy
// OnFailure), and stopped with SIGTERM (then SIGKILL after 30 s) when the
// pod goes. All pods share this machine's loopback, so each sidecar gets a
// port of its own and its agent's ARGO_PLUGIN_ADDRESSES says so.
//
// argoexec reads each plugin's bearer token from the hard-coded path
// /var/run/argo/<plugin>/token. Agents run in a private mount namespace
// (unshare) where a temp dir holding one harness token per plugin is
// bind-mounted over /run, so nothing on the host changes; where no mount
// namespace can be made and the process is root, the token files are
// written to /var/run/argo itself. Every agent presents the same token, and
// every sidecar checks it.
package argo
