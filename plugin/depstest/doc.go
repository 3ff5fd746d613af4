// Package depstest is for tests: it holds a package to a rule about what
// it links, read from `go list -deps` (the build's own graph, not the
// test's). A rule about one package says why it holds next to it: the
// acknowledger's packages link no Kubernetes client (plugin/ack,
// plugin/edge, cmd/sparkplug-ack), decide links nothing of client-go
// or Argo (plugin/decide). The rules that keep each mode's entry in its own room
// are one table here (modes_test.go): the controller links no request
// path, the monitor no step runner, the set-up the modes share
// (plugin/daemon) neither mode.
// One helper, so each rule is a table row and not a copy of the last.
package depstest
