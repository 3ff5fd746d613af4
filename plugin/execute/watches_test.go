package execute

import (
	"testing"
	"time"
)

// watchOpenDelay is the gate's delay in startCoreWith (no test here runs
// in parallel).
var watchOpenDelay time.Duration

// A write made right after startCoreWith returns reaches the caches even
// when watches open late: without the gate, the driver's status below is
// written before the pods' watch opens, and the node never fails.
func TestWritesRightAfterTheSyncAreSeen(t *testing.T) {
	watchOpenDelay = 300 * time.Millisecond
	t.Cleanup(func() { watchOpenDelay = 0 })
	e := newSquatEnv(t, "")
	e.startedBadly(t)
	e.failed(t, "ImagePullBackOff")
}
