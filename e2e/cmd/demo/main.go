// Command demo is `make demo`: it brings up the e2e environment (a local
// Kubernetes control plane with KWOK, Argo's workflow-controller and agent,
// sparkplug installed from manifests/), runs examples/spark-dag.yaml with
// simulated Spark containers, prints each node's phase and message as they
// change and the final tree, and tears everything down. With --keep the
// environment stays up in the background until `demo down`.
//
//	go run ./e2e/cmd/demo [--keep]
//	go run ./e2e/cmd/demo down
package main

import (
	"fmt"
	"os"
)

func main() {
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
