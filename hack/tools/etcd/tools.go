//go:build tools

// Package tools pins the etcd server used by the integration and e2e
// clusters. It is never compiled into sparkplug: hack/tools.sh builds the
// etcd binary from this module so that go.sum checksum-verifies the version.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
