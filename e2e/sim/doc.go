// Package sim simulates what the e2e control plane cannot run: the inside
// of Spark's containers. Only that.
//
// A test says how a driver behaves with a Driver (exit code, run time,
// termination message, waiting reason, eviction), which Inject writes into
// the driver.annotations of spark bodies; the KWOK Stages of e2e/stages
// read them and move the driver pod through its phases. Executors runs the
// part of a Spark driver that a Stage cannot express: for each running
// driver it creates the executor pods Spark would (count, names, labels and
// owner from the driver's spark.properties ConfigMap), and deletes them when
// the driver ends.
//
// Everything else in e2e is real: the API server, the scheduler, garbage
// collection, Argo's controller and agent, and the sparkplug binary.
package sim
