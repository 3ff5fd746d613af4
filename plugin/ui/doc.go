// Package ui is `sparkplug ui`: the Spark UI of a running step's driver
// forwarded to a local port, as `kubectl port-forward` does and as
// sparkctl forwards a SparkApplication's UI.
//
// The pure parts, tested without a cluster: which node an argument
// names, or the one running Spark node of a workflow (Choose); whether
// the pod the node reports is its driver, sparkplug's own, running, and
// what to say when it is not (CheckDriver); which port of the driver
// serves the UI (UIPort: the driver container's spark-ui port, which is
// spark.ui.port and where the UI Service of sparkUIOptions forwards,
// else 4040). Run does the API calls: a Get of the Workflow, a Get of the
// driver pod, and the port-forward (pods/portforward, by SPDY or by
// websocket as kubectl falls back) through client-go's
// tools/portforward, until ctx ends or the connection to the pod is lost.
// Forward takes the dialer, so that tests can run the forwarding against
// a port-forward server of their own: the API server passes the stream
// on to the driver's kubelet, which a test without kubelets does not
// have.
//
// What the user running it needs in the namespace: get on workflows, get
// on pods, create on pods/portforward.
package ui
