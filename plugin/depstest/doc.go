// Package depstest is for tests: it holds a package to a rule about what
// it links, read from `go list -deps` (the build's own graph, not the
// test's). Each rule says why it holds next to the package it is about:
// the acknowledger's packages link no Kubernetes client (plugin/ack,
// plugin/edge, cmd/sparkplug-ack), decide links no API client
// (plugin/decide), the controller no request path (plugin/controller),
// the monitor no step runner (plugin/monitor), the modes' shared set-up
// neither mode (plugin/daemon).
// One helper, so each rule is a table row and not a copy of the last.
package depstest
