// Package bench is the end-to-end scale benchmark, make bench-e2e: Spark
// steps launched through the real workflow-controller and agent and
// sparkplug, in sidecar mode and in controller mode, against the two ways
// users launch the same today. Two scenarios, each size N:
//
//   - one workflow fanning out N steps (a steps loop): N Spark steps in
//     sidecar mode (sparkplug) and in controller mode (controller), against
//     the same loop of N container steps (plain: Argo's own pods);
//   - N workflows of one step each, submitted together as a CronWorkflow's
//     runs fall due (what a converted ScheduledSparkApplication becomes):
//     sidecar-wf and controller-wf, against N one-container-step workflows
//     (plain-wf);
//   - and N SparkApplications handled by the Kubeflow Spark operator
//     v2.5.2's controller (operator; hack/operator.sh builds it), whose
//     spark-submit is the project's fake one: it creates the driver pod at
//     once, where Spark's is a JVM taking seconds, so the operator's
//     figures are its best case. The SparkApplications are created by the
//     benchmark, all at once; an Argo resource step would create each from
//     a pod of its own (argoexec, which cannot run under KWOK), a cost the
//     plain columns show.
//
// The launchers of each mode share one control plane, started for them:
// sidecar mode's first, then controller mode's, where Argo's own and the
// operator run too, so that controller mode's goals compare one control
// plane. Before each of its runs the controller's replicas are rolled out,
// so that their peak RSS, CPU and counters are that run's.
//
// For each N (200 and 1,000; SPARKPLUG_BENCH_N overrides, and
// SPARKPLUG_BENCH_KINDS picks launchers) it reports the time to the first
// and to all driver pods (pods) created, the time to all nodes done, the
// API requests per launch of all clients (the kube-apiserver's
// apiserver_request_total) and of sparkplug alone (the sidecars' or the
// controller replicas' rest_client_requests_total), the peak RSS and CPU
// summed over every sparkplug process (the sidecars, or the controller
// replicas and the acknowledgers) and per agent pod, and for the loop in
// sidecar mode the latency and API requests of status polls sent to the
// sidecar, exactly as its agent sends them, while it follows the N drivers.
//
// Under KWOK every played agent pod is two real processes (argoexec and
// its plugin sidecar). Above SPARKPLUG_BENCH_MAX_AGENTS (200) one-step
// workflows, sidecar-wf is not run, and controller-wf leaves the agent
// pods unplayed (Argo creates them, KWOK runs them, no process plays
// them): controller mode needs no agent to run a Spark step, and
// docs/operations.md states the acknowledgers' cost beside the measured
// figures.
//
// It merges its results into docs/bench/scale.json (a run replaces the
// launchers and sizes it measured and keeps the others), and writes the
// tables into the "How fast" section of docs/operations.md and a plot of
// pods created over time per N into docs/bench.
//
// Argo and sparkplug run with their own defaults (framework.Options
// Defaults): what a cluster runs, not the e2e suite's fast requeues.
// Spark's containers are simulated (e2e/sim, KWOK), as everywhere in e2e.
//
// The files with the bench build tag need the control plane; report.go
// and plot.go are pure and unit-tested.
package bench
