// Package stages holds the KWOK Stages that stand in for kubelet in the e2e
// control plane, and the pod annotations through which a test tells a
// simulated Spark driver how to behave.
//
// Given to KWOK (cluster.Options.KWOKStages), these Stages replace KWOK's
// default pod and node stages. The node becomes Ready and heartbeats every
// few seconds (node-initialize, node-heartbeat: KWOK's own, with a shorter
// heartbeat and ephemeral-storage capacity). Every pod on the fake node
// starts running at once
// (pod-ready) and is removed when deleted (pod-delete), as with KWOK's
// defaults; a pod annotated with a waiting reason stays Pending
// (pod-waiting); and a Spark driver pod (spark-role=driver) ends after a
// chosen time with a chosen exit code and termination message
// (driver-exit), or is evicted (driver-evict); a container step's pod
// annotated the same way ends too (step-exit), its wait container failing
// since no argoexec plays it. Nothing else is simulated
// here: executor pods come from the e2e/sim package, and everything that
// sparkplug and Argo do is real.
//
// The annotations are under the test-only domain sim.sparkplug.test, which
// sparkplug's validation does not reserve, so a test sets them through the
// spark body's driver.annotations like any user annotation.
package stages
