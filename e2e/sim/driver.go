package sim

import (
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/sparkplug-io/sparkplug/e2e/stages"
)

// Driver is how a simulated Spark driver behaves once it runs.
type Driver struct {
	// ExitCode is the driver container's exit code: 0 succeeds.
	ExitCode int
	// Run is how long the driver runs before it exits or is evicted
	// (rounded up to whole seconds).
	Run time.Duration
	// Message is the termination message (the end of the driver's log), or
	// with WaitingReason the waiting message.
	Message string
	// Reason overrides the terminated container's reason (Completed or
	// Error by default), e.g. OOMKilled.
	Reason string
	// WaitingReason keeps the driver Pending with this container waiting
	// reason (ImagePullBackOff, ...); it never runs.
	WaitingReason string
	// Evict evicts the driver after Run instead of letting it exit.
	Evict bool
	// Forever keeps the driver running until it is deleted.
	Forever bool
}

// Succeed is a driver that runs for d and exits 0.
func Succeed(d time.Duration) Driver { return Driver{Run: d} }

// Fail is a driver that runs for d and exits with code, message being the
// end of its log.
func Fail(d time.Duration, code int, message string) Driver {
	return Driver{Run: d, ExitCode: code, Message: message}
}

// Annotations are the driver pod annotations that make the KWOK Stages
// play d.
func (d Driver) Annotations() map[string]string {
	a := map[string]string{}
	if d.WaitingReason != "" {
		a[stages.AnnotationWaitingReason] = d.WaitingReason
		if d.Message != "" {
			a[stages.AnnotationMessage] = d.Message
		}
		return a
	}
	if d.Forever {
		return a
	}
	secs := int64((d.Run + time.Second - 1) / time.Second)
	a[stages.AnnotationRunSeconds] = strconv.FormatInt(secs, 10)
	if d.Evict {
		a[stages.AnnotationEvict] = "true"
		return a
	}
	a[stages.AnnotationExitCode] = strconv.Itoa(d.ExitCode)
	if d.Reason != "" {
		a[stages.AnnotationReason] = d.Reason
	}
	if d.Message != "" {
		a[stages.AnnotationMessage] = d.Message
	}
	return a
}

// Inject adds d's annotations to the driver.annotations of the spark body
// of every plugin template of obj (a Workflow, WorkflowTemplate,
// ClusterWorkflowTemplate or CronWorkflow as decoded from YAML or JSON),
// or, when names are given, of the templates with those names. It returns
// how many spark bodies it changed; naming a template that is not a spark
// template is an error.
func Inject(obj map[string]any, d Driver, names ...string) (int, error) {
	templates, err := templatesOf(obj)
	if err != nil {
		return 0, err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = false
	}
	n := 0
	for _, t := range templates {
		tmpl, ok := t.(map[string]any)
		if !ok {
			continue
		}
		name, _ := tmpl["name"].(string)
		if len(names) > 0 {
			if _, ok := want[name]; !ok {
				continue
			}
		}
		plugin, _ := tmpl["plugin"].(map[string]any)
		body, ok := plugin["spark"].(map[string]any)
		if !ok {
			continue
		}
		want[name] = true
		driver, _ := body["driver"].(map[string]any)
		if driver == nil {
			driver = map[string]any{}
			body["driver"] = driver
		}
		annotations, _ := driver["annotations"].(map[string]any)
		if annotations == nil {
			annotations = map[string]any{}
		}
		for k, v := range d.Annotations() {
			annotations[k] = v
		}
		driver["annotations"] = annotations
		n++
	}
	for name, found := range want {
		if !found {
			return n, fmt.Errorf("no spark template named %q", name)
		}
	}
	return n, nil
}

// templatesOf returns the templates list of a workflow-like object.
func templatesOf(obj map[string]any) ([]any, error) {
	kind, _ := obj["kind"].(string)
	spec, _ := obj["spec"].(map[string]any)
	switch kind {
	case "Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate":
	case "CronWorkflow":
		spec, _ = spec["workflowSpec"].(map[string]any)
	default:
		return nil, fmt.Errorf("kind %q has no templates", kind)
	}
	templates, _ := spec["templates"].([]any)
	return templates, nil
}

// merged returns a copy of a with b's entries added.
func merged(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}
