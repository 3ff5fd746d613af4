//go:build tools

// Package tools pins the Kubeflow Spark operator, whose controller the
// end-to-end benchmark (make bench-e2e) runs as the peer users run today:
// SparkApplications launched by `spark-operator controller start`. It is
// never compiled into sparkplug.
//
// hack/operator.sh builds it with the replace directives of the
// operator's own go.mod carried over (go.mod here), since a dependent
// module's build ignores them.
package tools

import (
	_ "github.com/kubeflow/spark-operator/v2/cmd/operator"
)
