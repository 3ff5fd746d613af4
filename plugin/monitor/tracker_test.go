package monitor

import (
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/execute"
)

// The reason counted is the one the sidecar records: a renamed reason
// there fails here instead of counting nothing. The Events the monitor
// records have the reasons the sidecar's have for the same deletions.
func TestEventReasonsAreTheSidecars(t *testing.T) {
	for _, r := range [][2]string{
		{ReasonSubmissionFailed, execute.ReasonSubmissionFailed},
		{eventDriverExpired, execute.ReasonDriverExpired},
		{eventDriverDeleted, execute.ReasonDriverDeleted},
	} {
		if r[0] != r[1] {
			t.Errorf("the monitor's reason %s, the sidecar's %s", r[0], r[1])
		}
	}
}
