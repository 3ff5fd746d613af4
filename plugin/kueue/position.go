package kueue

import (
	"encoding/json"
	"fmt"
	"path"
)

// VisibilityGroup serves the pending workloads of a LocalQueue in the
// order Kueue will admit them, when Kueue runs with its visibility API
// (the VisibilityOnDemand feature, an aggregated API server).
const VisibilityGroup = "visibility.kueue.x-k8s.io"

// PendingPath is the visibility API's path of a LocalQueue's pending
// workloads.
func PendingPath(namespace, localQueue string) string {
	return path.Join("/apis", VisibilityGroup, Version, "namespaces", namespace, "localqueues", localQueue, "pendingworkloads")
}

// Positions reads a pendingworkloads answer: each pending Workload's
// position in its LocalQueue, 0 the next to be admitted.
func Positions(body []byte) (map[string]int32, error) {
	var summary struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			PositionInLocalQueue int32 `json:"positionInLocalQueue"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &summary); err != nil {
		return nil, fmt.Errorf("read the pending workloads: %w", err)
	}
	out := make(map[string]int32, len(summary.Items))
	for _, it := range summary.Items {
		out[it.Metadata.Name] = it.PositionInLocalQueue
	}
	return out, nil
}
