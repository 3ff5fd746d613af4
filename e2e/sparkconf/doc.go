// Package sparkconf reads a Spark application's conf the way a Spark driver
// does: spark.properties (or spark-defaults.conf) parsed as
// java.util.Properties.load parses it, and the few values the e2e
// environment derives from it as Spark would (how many executors a driver
// starts, how much memory an executor container gets).
//
// The KWOK-side simulation (e2e/sim) and the Spark stand-in that runs in
// real containers (e2e/cmd/sparkstandin) share it, so both read what
// sparkplug writes with the same rules.
package sparkconf
