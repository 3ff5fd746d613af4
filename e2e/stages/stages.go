package stages

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FS holds the Stage files, one Stage per file.
//
//go:embed *.yaml
var FS embed.FS

// Annotations a test puts on a driver pod (through the spark body's
// driver.annotations) to choose what the simulated driver does.
const (
	// Domain is the test-only annotation domain.
	Domain = "sim.sparkplug.test"

	// AnnotationExitCode makes a running driver end with this exit code
	// ("0" succeeds, anything else fails). Without it (and without
	// AnnotationEvict) a driver runs until it is deleted.
	AnnotationExitCode = Domain + "/exit-code"
	// AnnotationRunSeconds is how long the driver runs before it ends or is
	// evicted, in whole seconds from its start ("0" when absent).
	AnnotationRunSeconds = Domain + "/run-seconds"
	// AnnotationReason overrides the terminated container's reason
	// (default Completed for exit code 0, else Error), e.g. OOMKilled.
	AnnotationReason = Domain + "/reason"
	// AnnotationMessage is the driver container's termination message
	// (what Spark's log tail would be), or with AnnotationWaitingReason the
	// waiting message.
	AnnotationMessage = Domain + "/message"
	// AnnotationWaitingReason keeps the pod Pending with every container
	// waiting for this reason, e.g. ImagePullBackOff.
	AnnotationWaitingReason = Domain + "/waiting-reason"
	// AnnotationEvict makes the driver be evicted after AnnotationRunSeconds
	// instead of exiting.
	AnnotationEvict = Domain + "/evict"
)

// Annotations lists every annotation the Stages read.
var Annotations = []string{
	AnnotationExitCode, AnnotationRunSeconds, AnnotationReason,
	AnnotationMessage, AnnotationWaitingReason, AnnotationEvict,
}

// Write writes every Stage file into dir and returns their paths, for
// cluster.Options.KWOKStages.
func Write(dir string) ([]string, error) {
	names, err := fs.Glob(FS, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list stages: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create stage dir: %w", err)
	}
	paths := make([]string, 0, len(names))
	for _, name := range names {
		b, err := FS.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read stage %s: %w", name, err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, fmt.Errorf("write stage %s: %w", name, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
