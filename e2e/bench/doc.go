// Package bench is the end-to-end scale benchmark, make bench-e2e: a
// workflow fanning out N Spark steps through the real workflow-controller,
// agent and sparkplug sidecar, against the two ways users launch the same
// today, in the same cluster and run:
//
//   - plain: the same workflow with N container steps, Argo's own pods;
//   - operator: N SparkApplications handled by the Kubeflow Spark operator
//     v2.5.2's controller (hack/operator.sh builds it), whose spark-submit is
//     the project's fake one: it creates the driver pod at once, where
//     Spark's is a JVM taking seconds, so the operator's figures are its
//     best case. The SparkApplications are created by the benchmark, all at
//     once; an Argo resource step would create each from a pod of its own
//     (argoexec, which cannot run under KWOK), a cost the plain column
//     shows.
//
// For each N (100, 500, 1,000; SPARKPLUG_BENCH_N overrides) it reports the
// time to the first and to all driver pods (pods) created, the time to all
// nodes done, the API requests per launch of all clients (the
// kube-apiserver's apiserver_request_total) and of sparkplug's sidecar
// alone (its rest_client_requests_total), the sidecar's peak RSS and CPU,
// and the latency and API requests of status polls sent to the sidecar,
// exactly as its agent sends them, while it follows the N drivers. It
// writes the table into README.md's "How fast" section and a plot of pods
// created over time per N into docs/bench.
//
// Argo and sparkplug run with their own defaults (framework.Options
// Defaults): what a cluster runs, not the e2e suite's fast requeues.
// Spark's containers are simulated (e2e/sim, KWOK), as everywhere in e2e.
//
// The files with the bench build tag need the control plane; report.go is
// pure and unit-tested.
package bench
