//go:build tools

// Package tools pins the Argo Workflows workflow-controller and argoexec
// used by the e2e cluster. It is never compiled into sparkplug.
//
// The module zip of argo-workflows cannot be built as is: it drops
// workflow/executor/osspecific/signal_linux.go (a git symlink to
// signal_darwin.go), and the controller's pprof server listens on all
// interfaces. hack/tools.sh therefore copies the checksum-verified module
// into its cache, restores that file, binds pprof to 127.0.0.1, and builds
// from a copy of this module with a replace pointing at the patched copy.
// The tablewriter replace below is carried over from argo's own go.mod.
package tools

import (
	_ "github.com/argoproj/argo-workflows/v3/cmd/argoexec"
	_ "github.com/argoproj/argo-workflows/v3/cmd/workflow-controller"
)
