// Package archive stores a finished driver's log in the workflow's Argo
// artifact repository, so that it outlives the driver pod and the Argo UI
// shows it as the node's output artifact driver-log (Argo shows logs only
// for Pod nodes, argo-workflows#10647).
//
// The repository is the one Argo resolved for the workflow and recorded in
// status.artifactRepositoryRef.artifactRepository: an artifact-repositories
// ConfigMap's entry or the workflow-controller's default, so sparkplug
// reads neither the controller's ConfigMap nor any ConfigMap at all. S3 and
// S3-compatible servers are supported. The credentials are read, when an
// upload starts, from the Secrets the repository names (the plugin's Role
// grants get on those names only).
//
// The log is read through the API server (pods/log) and kept bounded: the
// last MaxBytes of it, the end being where a failure shows, with one line
// saying how much was dropped before. Uploads run in the background, at
// most Concurrency at once, one per driver however often the agent asks
// (Jobs); the core (package execute) reports Running meanwhile and records the
// stored location on the driver pod, so a restarted plugin never uploads
// a log it already stored, and an upload it lost is simply made again (a
// PUT of the same key).
package archive
