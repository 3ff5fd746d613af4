// Command sparkstandin stands in for Apache Spark's container image in the
// pods of the e2e tests' real node: a static Go binary that behaves, seen
// from Kubernetes, as Spark on Kubernetes does, in seconds and megabytes.
//
// Its image (e2e/images) lays it out as Spark's: the binary is
// /opt/entrypoint.sh, the image's ENTRYPOINT, run as uid 185 in
// /opt/spark/work-dir, so the pods sparkplug builds (which set only args,
// as spark-submit does) run it unchanged:
//
//	driver [spark-submit options] --properties-file /opt/spark/conf/spark.properties [--class C] RESOURCE [APP ARGS]
//	executor
//
// The driver reads spark.properties as Spark does, creates its executor
// pods through the API with its own ServiceAccount's token, as Spark's
// allocator does (names, labels, owner, env, resources, the pod template),
// listens on spark.driver.port (at SPARK_DRIVER_BIND_ADDRESS, the pod's IP,
// which Spark's entrypoint passes as spark.driver.bindAddress), waits for them to register (up to
// spark.scheduler.maxRegisteredResourcesWaitingTime, 30s), stops them,
// deletes them unless spark.kubernetes.executor.deleteOnTermination=false,
// and exits. The application arguments say how:
//
//	--exit=N            exit code (default 0)
//	--sleep=D           run D once the executors registered (Go duration)
//	--message=TEXT      write TEXT to /dev/termination-log (and stdout)
//	--min-executors=N   fail (exit 1) unless N executors registered
//	--oom               allocate memory until the container's limit kills the driver
//	--executor-oom      tell every executor to do the same
//
// Other arguments are ignored, so any Spark step runs. An executor connects
// to the host and port of SPARK_DRIVER_URL (the driver Service's name),
// retrying for two minutes, registers with its SPARK_EXECUTOR_ID, and
// stays until the driver stops it (exit 0) or goes away (exit 1, as
// Spark's "Driver disassociated"). SIGTERM ends either with 143, as the JVM
// does; the driver deletes its executors first, as Spark's shutdown hook
// does.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	switch {
	case len(args) > 0 && args[0] == "driver":
		return runDriver(ctx, args[1:], os.Getenv, inCluster, stdout, log)
	case len(args) > 0 && args[0] == "executor":
		return runExecutor(ctx, os.Getenv, log)
	default:
		fmt.Fprintln(stderr, "usage: sparkstandin driver --properties-file FILE [--class C] RESOURCE [ARGS] | sparkstandin executor")
		return 2
	}
}
