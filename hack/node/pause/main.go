// Command pause is the sandbox ("pause") container of the e2e real node:
// containerd's sandbox_image, built locally because no registry with
// registry.k8s.io/pause is reachable. Like the upstream pause it holds the
// pod's namespaces open, reaps the zombies of a shared process namespace,
// and exits 0 on SIGTERM or SIGINT. hack/node.sh builds it static.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap waits for every exited child without blocking.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
