// Package kueue is what sparkplug knows of Kueue's API, and nothing that
// talks to it: the few Workload and ResourceFlavor fields it writes and
// reads (a local copy of kueue.x-k8s.io/v1beta2's, so the project's
// Kubernetes modules are not pinned to Kueue's), which LocalQueue a step
// asks for (QueueOf), what a Workload says (View: admitted, evicted,
// preempted, pending, why it waits, whether it can never be admitted
// (NeverFitsOf: a pod set asks more than its ClusterQueue's whole
// capacity), its place in its LocalQueue, read from the visibility API's
// answer by Positions), and how an admission
// changes the step's body before its driver is built (Admit).
//
// sparkplug is the "job" of Kueue's job framework for a Spark step: it
// creates one Workload per node attempt with two pod sets, the driver and
// its executors, waits for Kueue to admit it, launches the driver with the
// admitted flavors, sets PodsReady, stops the driver when Kueue evicts the
// Workload, and deletes the Workload when the attempt is over. The queue
// label never lands on the pods, so Kueue's pod integration does not gate
// or count them a second time. Package objects builds the Workload,
// package scope caches it (scope/kueue.go), package decide makes every
// choice on what it says (decide/kueue.go), and package execute reads,
// creates, patches and deletes it (execute/kueue.go).
package kueue
