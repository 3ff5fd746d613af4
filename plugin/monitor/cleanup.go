package monitor

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/cleanup"
)

// The monitor's leader searches its cache of the namespaces' drivers for
// the leftovers no sidecar will delete (package cleanup, which records
// the sidecar's Event reasons: the same thing happened). The cache only
// picks candidates: a driver whose Workflow the cache has, not ended, is
// left alone without an API request; any other is decided on the
// Workflow as read now, once per workflow a search.
func sweep(ctx context.Context, c *cleanup.Cleaner, w *watch) {
	for _, ns := range w.namespaces {
		c.Leftovers(ctx, cleanup.Search{Drivers: w.drivers(ns), Known: func(uid string) metav1.Object {
			if m := w.workflow(ns, uid); m != nil {
				return m
			}
			return nil
		}})
	}
}
