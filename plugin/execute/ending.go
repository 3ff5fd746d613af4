package execute

import (
	"context"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/cleanup"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
)

// Cleaner is the core's cleanup (package cleanup): what it launched,
// deleted once nothing needs it. The process runs its periodic part once
// (cleanup.Run).
func (c *Core) Cleaner() *cleanup.Cleaner { return c.cleaner }

// onEnding is the scope registry's callback for an ending workflow
// (cleanup.Ending): its running drivers are swept in the background and,
// with Options.ReleaseEnded, a workflow that ended is no longer followed.
func (c *Core) onEnding(sc *scope.Scope, w *wfv1.Workflow) {
	var release func(string)
	if c.opts.ReleaseEnded {
		release = c.Release
	}
	c.cleaner.OnEnding(sc, w, release)
}

// Ended is told that the workflow with uid may have ended (its TaskSet
// went, or was labelled completed): it is released once gone, or once it
// ended and its running drivers were deleted (cleanup.Cleaner.Check).
func (c *Core) Ended(ctx context.Context, uid string) {
	fl := c.flowOf(uid)
	if fl == nil {
		return
	}
	if c.cleaner.Check(ctx, fl.scope) {
		c.Release(uid)
	}
}

// SweepEnding is the shutdown path (SIGTERM: the agent pod is deleted when
// the workflow ends): every workflow this process serves that is ending,
// or gone, has its running drivers deleted before the process exits.
func (c *Core) SweepEnding(ctx context.Context) error {
	return c.cleaner.SweepEnding(ctx, c.scopes.Scopes())
}
