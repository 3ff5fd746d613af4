package step

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/kueue"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// ErrMalformed marks a template the plugin cannot even read: its plugin
// value is not an object, or it cannot be keyed. The sidecar's request
// path (package request) answers it 400; every other Parse error is the
// node's failure message.
var ErrMalformed = errors.New("malformed template")

// Step is a spark step as the plugin runs it: the template, its parsed
// body and its identity key.
type Step struct {
	// Template is the template as Argo resolved it (after substitution).
	Template *wfv1.Template
	// Body is the spark body, decoded, defaulted and validated.
	Body *spec.SparkApplicationSpec
	// Key is the template's label-safe identity key (Key).
	Key string
	// Timeout is the template's timeout over the whole run; 0 is none.
	Timeout time.Duration
	// KueueQueue is the Kueue LocalQueue each attempt waits in ("": none):
	// the template's kueue.x-k8s.io/queue-name label, else the plugin's
	// default (SetKueueQueue).
	KueueQueue string
}

// SetKueueQueue sets the step's Kueue LocalQueue from its template's
// labels, else defaultQueue.
func (s *Step) SetKueueQueue(defaultQueue string) {
	s.KueueQueue = kueue.QueueOf(s.Template.Metadata.Labels, defaultQueue)
}

// Parse reads a template's spark body with the plugin's defaults. ok is
// false, with no error, for a template of another kind or plugin. An error
// wrapping ErrMalformed means the template is unreadable; any other error
// (an *spec.InvalidError, a bad timeout) says why the step cannot run.
func Parse(t *wfv1.Template, d spec.PluginDefaults) (st *Step, ok bool, err error) {
	raw, ok, err := BodyOf(t)
	if err != nil {
		return nil, true, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if !ok {
		return nil, false, nil
	}
	body, err := spec.ParseWith(raw, d)
	if err != nil {
		return nil, true, err
	}
	timeout, err := ParseTimeout(t.Timeout)
	if err != nil {
		return nil, true, err
	}
	key, err := Key(t)
	if err != nil {
		return nil, true, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return &Step{Template: t, Body: body, Key: key, Timeout: timeout}, true, nil
}

// Run names attempt n of the step's run for one node of a workflow.
func (s *Step) Run(wf spark.WorkflowRef, node string, attempt int) objects.Run {
	return objects.Run{Workflow: wf, NodeID: node, TemplateKey: s.Key, Attempt: attempt, KueueQueue: s.KueueQueue}
}

// Build makes the objects of attempt n of the step's run for a node.
func (s *Step) Build(b *objects.Builder, wf spark.WorkflowRef, node string, attempt int) (*objects.Set, error) {
	return b.Build(s.Body, s.Run(wf, node, attempt))
}

// maxShownTimeout is how much of a timeout that cannot be read its error
// shows.
const maxShownTimeout = 64

// ParseTimeout reads an Argo template timeout: a Go duration ("1h30m") or
// a number of seconds ("300"). Empty is no timeout.
func ParseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	// The timeout is echoed cut short, as an invalid body's values are:
	// the error is the node's message and a log line.
	return 0, fmt.Errorf("template timeout %q is neither a duration such as 1h nor a number of seconds", spec.Truncate(s, maxShownTimeout))
}
