package ack

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/depstest"
	"github.com/sparkplug-io/sparkplug/plugin/edge/edgetest"
)

// answer is what the rule makes of body: the 200 reply, or "" and the
// error of a bad request.
func answer(body string) (string, error) {
	req, err := Decode(strings.NewReader(body))
	if err != nil {
		return "", err
	}
	kind, err := Classify(req)
	if err != nil {
		if !errors.Is(err, ErrBadRequest) {
			return "", errors.New("an error that does not wrap ErrBadRequest: " + err.Error())
		}
		return "", err
	}
	return string(Reply(kind)), nil
}

func TestTheRuleAnswersEveryCase(t *testing.T) {
	for _, tc := range edgetest.Cases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			got, err := answer(tc.Body)
			if got != tc.Reply {
				t.Fatalf("reply %q (error %v), want %q", got, err, tc.Reply)
			}
			if tc.Reply == "" && err == nil {
				t.Fatal("a bad request without an error")
			}
		})
	}
}

// A bad request's error says what is wrong: which part is missing, and
// for a plugin value, that it is not an object of one key.
func TestBadRequestsSayWhy(t *testing.T) {
	for body, want := range map[string]string{
		`{"workflow":{}}`: "the request needs workflow and template",
		`{"workflow":{},"template":{"plugin":{"spark":{}}}}`:                "workflow.metadata needs name, namespace and uid",
		`{"workflow":{},"template":{"plugin":{"a":1,"b":2}}}`:               "expected exactly one key, got 2",
		`{"workflow":{},"template":{"plugin":[1]}}`:                         "cannot unmarshal array",
		`{"workflow":{"metadata":{"uid":true}},"template":{"plugin":null}}`: "cannot unmarshal bool",
	} {
		if _, err := answer(body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", body, err, want)
		}
	}
	// A plugin value built by hand (as the sidecar passes Argo's) is
	// checked by spark.PluginBody: not an object is a bad request.
	_, err := Classify(Request{Workflow: &Workflow{}, Template: &Template{Plugin: &Plugin{Value: json.RawMessage(`"spark"`)}}})
	if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "template.plugin is not an object") {
		t.Fatalf("a string plugin value: %v, want a bad request naming template.plugin", err)
	}
}

// The acknowledgement is the JSON the agent reads as a node without a
// phase and a zero requeue.
func TestTheRepliesAreTheAgentsJSON(t *testing.T) {
	var reply struct {
		Node    *map[string]any `json:"node"`
		Requeue *string         `json:"requeue"`
	}
	if err := json.Unmarshal(Reply(Spark), &reply); err != nil || reply.Node == nil || len(*reply.Node) != 0 || reply.Requeue == nil || *reply.Requeue != "0s" {
		t.Fatalf("acknowledgement %s: want an empty node and requeue 0s", Reply(Spark))
	}
	var other map[string]any
	if err := json.Unmarshal(Reply(Other), &other); err != nil || len(other) != 0 {
		t.Fatalf("the reply to another template %s: want {}", Reply(Other))
	}
}

// The acknowledger links no Kubernetes client, no Argo types and no gin:
// this package imports the standard library and package spark only, and
// so does the acknowledger's binary, apart from pflag.
func TestImportsStayLight(t *testing.T) {
	heavy := []string{"k8s.io/", "sigs.k8s.io/", "github.com/argoproj/", "github.com/gin-gonic/"}
	depstest.Check(t,
		depstest.Rule{Pkg: ".", Self: "github.com/sparkplug-io/sparkplug/plugin/ack", Forbid: heavy,
			Allow: []string{"github.com/sparkplug-io/sparkplug/plugin/ack", "github.com/sparkplug-io/sparkplug/plugin/spark"}},
		depstest.Rule{Pkg: "../../cmd/sparkplug-ack", Self: "github.com/sparkplug-io/sparkplug/cmd/sparkplug-ack", Forbid: heavy,
			Allow: []string{"github.com/sparkplug-io/sparkplug/", "github.com/spf13/pflag"}},
	)
}
