// Package operator runs the Kubeflow Spark operator (v2.5.2, pinned in
// hack/operator) on the e2e control plane of package cluster, as the peer
// sparkplug is measured against in the end-to-end benchmark: Build builds
// its binary and a Spark home with hack/operator.sh, Start installs its
// CRDs and runs `spark-operator controller start` with the settings a Helm
// install runs (Args says which and why; the webhook, another subcommand,
// stays off), and SparkApplication is the spark-pi step of
// examples/spark-pi.yaml as a SparkApplication.
//
// spark-submit is faked: no Spark distribution nor Java runs here, so the
// operator's $SPARK_HOME/bin/spark-submit is plugin/submit/testdata/
// fakesubmit, which creates the driver pod, its ConfigMap and Service from
// the operator's arguments at once, where Spark's would first start a JVM
// for several seconds. That makes these figures the operator's best case.
// The driver pod then lives as every driver of the e2e environment does:
// the KWOK Stages of e2e/stages move it as the annotations of e2e/sim say,
// and sim's executor simulation creates its executors from its
// spark.properties.
package operator
