// Package daemon is the process setup that `sparkplug serve` (package
// sidecar) and `sparkplug controller` (package controller) share: the
// Kubernetes, Argo and dynamic clients of one REST config, an Event
// recorder that can be flushed before the process exits, and the metrics
// and profile servers under the HTTP limits of package edge. It decides
// nothing about Spark.
package daemon
