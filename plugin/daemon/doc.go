// Package daemon is the process set-up that sparkplug's long-running
// commands share, and nothing of either mode: `sparkplug serve`
// (package sidecar) and `sparkplug controller` (package controller)
// start from Start (the clients of one REST config, the policy with the
// process's own account, the object templates, a flushable Event
// recorder, the step metrics, the profile server); every one of them sets
// the Go collector's memory limit from its container's (LimitMemory); the
// controller and
// `sparkplug monitor` (package monitor) serve /metrics, /healthz and
// /readyz with ServeHealth and elect their leader with Lead. It decides
// nothing about Spark, and imports no mode (plugin/depstest's
// modes_test.go checks).
package daemon
