//go:build !unix

package submit

import "os/exec"

// inOwnGroup leaves cmd as it is: without process groups, cancellation
// kills spark-submit itself only.
func inOwnGroup(*exec.Cmd) {}
