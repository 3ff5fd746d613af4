// Package objects turns a spark body and a Run (workflow, node, attempt) into
// the objects spark-submit --deploy-mode cluster would create: the driver
// pod running `driver --properties-file /opt/spark/conf/spark.properties`,
// an immutable ConfigMap with spark.properties and the executor pod
// template, and the headless driver Service. Nothing here talks to the API
// server; the caller creates the pod, then OwnedBy hands the others to it.
// Build makes them by one build for both deploy modes; a deployMode says
// what sets one apart. In cluster mode (builder.go) the driver runs the
// application; client mode (client.go) makes the same objects the
// hand-made client-mode way: the driver pod runs spark-submit
// --deploy-mode client itself, the ConfigMap is its conf directory
// (spark-defaults.conf, spark-env.sh, the executor pod template), and a UI
// Service is always made. The driver pod is built by driverSteps, small
// functions applied in order (driver.go); resources.go sizes the
// containers as Spark does. Every conf value read to size requests and
// quota, count executors or choose what to build (cores, memory, off-heap,
// dynamic allocation, ports, tmpfs) is read as Spark reads it, by package
// confvalue, and checkConf refuses what Spark would read otherwise.
// Reserved labels come from the one table in package spark.
//
// Properties is the effective Spark conf, derived from the body as the Spark
// operator's spark-submit arguments are, overlaid with the body's sparkConf,
// then with the keys sparkplug owns (OwnedConf). Where spark-submit reads
// the conf to shape the driver pod (image, resources, labels, node
// selectors, secrets, local dirs, ports) the builder reads the same keys,
// so a sparkConf entry has the effect it has with spark-submit. Fields Spark
// has no conf key for (tolerations, affinity, volumes, sidecars, ...) are
// set on the pod and on the executor template as the operator's webhook
// sets them.
//
// A body's driver.template and executor.template are the base of their pod,
// as Spark uses its pod template files (podBase); the skeleton, Spark's
// settings and the body's fields are laid over them. monitoring adds the
// metrics files to the run's ConfigMap and the JMX exporter to the pods
// (monitoring.go); sparkUIOptions adds a UI Service (ui.go), and with a
// URL format for the UI an Ingress to it, whose path becomes
// spark.ui.proxyBase; driverIngressOptions add a Service and an Ingress
// per port (ingress.go): all returned in Set.Extra. batchScheduler
// sets the scheduler's pod metadata (scheduler.go) and, for Volcano and
// kube-scheduler, builds the PodGroup, an unstructured object in
// Set.PodGroup, which the caller creates before the driver
// (podgroup.go).
//
// Names are a pure function of the Run (NamesFor), so a repeated create is
// an AlreadyExists, never a second driver. The pod skeletons come from
// package templates (or an operator's directory) and are decoded once by
// New; user values are only ever set on typed objects.
package objects
