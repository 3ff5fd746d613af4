// Package driverpod holds the small rules about a driver pod that exists,
// shared by the sidecar (plugin/execute) and `sparkplug monitor`
// (plugin/monitor): whether it is sparkplug's driver of a workflow's
// node (OwnDriver), which attempt it is, whether it has finished and
// when, whether its timeToLiveSeconds ran out, and how it is deleted
// (by uid, so a pod that replaced it under its name is never touched).
// NotOurs is the one rule for any object found under a name sparkplug
// gives a run (a driver, its ConfigMap and Services, a PodGroup, a
// tombstone): it is the run's only with the run's labels and its driver
// or Workflow as owner.
//
// They live here, not in either caller, because both delete drivers:
// the sidecar while its workflow runs, the monitor after the workflow's
// agent pod (and with it the sidecar) is gone. A driver one of them would
// delete and the other would keep, or a pod with copied labels that one
// of them takes for a driver, would be a bug; one set of rules makes
// that impossible.
//
// Everything here is pure: it holds no client (deleting a driver is
// kube.DeletePod), so package decide, which reads it, cannot act.
package driverpod
