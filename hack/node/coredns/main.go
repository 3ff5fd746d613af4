// Command coredns is CoreDNS v1.15.0 with only the plugins the e2e real node
// uses: bind (listen on the bridge address), errors, log, cache and
// kubernetes (Services and Pods of the test API server under
// cluster.local). The stock build links every plugin (cloud DNS providers,
// tracing, QUIC, ...), which costs minutes of cold build and nothing the
// tests need; CoreDNS documents this way of choosing plugins, a main
// package that imports coremain and the plugins wanted.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
)

func main() {
	coremain.Run()
}
