package execute

import (
	"github.com/sparkplug-io/sparkplug/plugin/policy"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/step"
)

// admit checks the objects a node's step builds against the plugin's
// policy, once, when the step is parsed: a refusal fails the node as an
// invalid body does, before anything is created, and is not retried (the
// same body is refused again). A queued step's WorkloadPriorityClass is
// checked first. What the policy reads (service accounts,
// volumes, Secrets, Services, Ingress hosts and annotations) is the same
// in every attempt, so the first attempt's objects stand for all.
func (c *Core) admit(st *step.Step, wf spark.WorkflowRef, node string) error {
	if err := policy.CheckPriorityClass(c.opts.Policy, st.KueueQueue, st.Template.Metadata.Labels); err != nil {
		return err
	}
	objs, err := st.Build(c.builder, wf, node, 1)
	if err != nil {
		return nil // the launch reports why the objects cannot be built
	}
	return policy.Check(c.opts.Policy, st.Body, objs)
}
