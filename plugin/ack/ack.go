package ack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// ErrBadRequest marks a request that is not a template.execute request at
// all (the server answers 400).
var ErrBadRequest = errors.New("bad request")

// Request is the part of a template.execute request the answer depends
// on, as the agent sends it: {"workflow":{"metadata":...},"template":...}.
// Other fields are not read.
type Request struct {
	Workflow *Workflow `json:"workflow"`
	Template *Template `json:"template"`
}

// Workflow is the request's workflow.
type Workflow struct {
	Metadata Metadata `json:"metadata"`
}

// Metadata names the request's workflow.
type Metadata struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`
}

// Template is the request's template; only its plugin value counts.
type Template struct {
	Plugin *Plugin `json:"plugin"`
}

// Plugin is a template's plugin value, raw.
type Plugin struct {
	Value json.RawMessage
}

// UnmarshalJSON keeps the raw value and refuses what Argo's own type
// (wfv1.Plugin) refuses when the sidecar decodes the same body: a value
// that is not an object with exactly one key.
func (p *Plugin) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if len(m) != 1 {
		return fmt.Errorf("expected exactly one key, got %d", len(m))
	}
	p.Value = append(json.RawMessage(nil), b...)
	return nil
}

// Decode reads one request from r, as the sidecar's server does (one
// JSON value; what follows it is not read). Its error is what the server
// answers 400 (or 413 when r says the body is too long). Fields Request
// does not hold are not type-checked: a template whose other fields have
// the wrong JSON types, which the agent never sends (it encodes Argo's
// own type), is 400 from the sidecar and answered here by its plugin.
func Decode(r io.Reader) (Request, error) {
	var req Request
	err := json.NewDecoder(r).Decode(&req)
	return req, err
}

// Kind is what a request asks about.
type Kind int

const (
	// Other is another plugin's template (or no plugin template at all).
	Other Kind = iota
	// Spark is a spark step.
	Spark
)

// Classify is the one rule for what a template.execute request is: a
// request needs workflow and template; its template is a spark step when
// spark.PluginBody says so, and a spark step's workflow must be named
// (name, namespace, uid) for the sidecar to follow it. Errors wrap
// ErrBadRequest.
func Classify(r Request) (Kind, error) {
	if r.Template == nil || r.Workflow == nil {
		return Other, fmt.Errorf("%w: the request needs workflow and template", ErrBadRequest)
	}
	var value json.RawMessage
	if r.Template.Plugin != nil {
		value = r.Template.Plugin.Value
	}
	_, ok, err := spark.PluginBody(value)
	if err != nil {
		return Other, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if !ok {
		return Other, nil
	}
	if m := r.Workflow.Metadata; m.Name == "" || m.Namespace == "" || m.UID == "" {
		return Other, fmt.Errorf("%w: workflow.metadata needs name, namespace and uid", ErrBadRequest)
	}
	return Spark, nil
}

// Reply is the body of the 200 answer to a request of kind k: the
// acknowledgement for a spark step, {} for any other.
func Reply(k Kind) []byte {
	if k == Spark {
		return []byte(`{"node":{},"requeue":"0s"}`)
	}
	return []byte(`{}`)
}
