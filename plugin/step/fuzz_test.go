package step

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// FuzzRequest follows a template.execute request body along the path the
// plugin takes with it: decoded as the HTTP server decodes it, then the
// template parsed (its spark body found, decoded, defaulted, validated, its
// timeout read) and keyed, as the core (package execute) does before it looks at the
// cluster. spec's FuzzParse fuzzes the spark body alone; here the whole
// request is the input.
//
// Whatever the bytes: no panic. A template the plugin cannot read is the
// request's 400. Any other error becomes the node's message: the error
// itself, and the message Argo is given, stay within spec.MaxMessageBytes.
// A step that parses has a key of identity.KeyLength characters that the
// same bytes always give, and that Argo's decode and re-encode of the
// template (the TaskSet round trip) keeps. Plain `go test` runs the seeds:
// the examples' templates and the hand-made ones below.
func FuzzRequest(f *testing.F) {
	for _, seed := range exampleRequests(f) {
		f.Add(seed)
	}
	wf := `{"workflow":{"metadata":{"name":"wf","namespace":"jobs","uid":"u-1"}},`
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `{"template":null}`, `{"workflow":{}}`, `{"workflow":{"metadata":{}},"template":{}}`,
		wf + `"template":{"name":"pi","plugin":` + sparkPi + `}}`,
		wf + `"template":{"name":"pi","timeout":"1h","plugin":` + sparkPi + `}}trailing`,
		wf + `"template":{"name":"pi","timeout":"soon","plugin":` + sparkPi + `}}`,
		// A timeout that cannot be read was echoed whole: a node message
		// and a log line as long as the request let it be.
		wf + `"template":{"name":"pi","timeout":"` + strings.Repeat("9", 5000) + `","plugin":` + sparkPi + `}}`,
		wf + `"template":{"name":"pi","plugin":["spark"]}}`,
		wf + `"template":{"name":"pi","plugin":{"slack":{"text":"hi"}}}}`,
		wf + `"template":{"name":"pi","plugin":{"spark":null}}}`,
		wf + `"template":{"name":"pi","plugin":{"spark":"x","spark":{}}}}`,
		wf + `"template":{"name":"c","container":{"image":"busybox"}}}`,
		wf + `"template":{"name":"pi","inputs":{"parameters":[{"name":"n","value":"3"}]},"plugin":{"spark":{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","arguments":["{{inputs.parameters.n}}"],"driver":{"memory":"lots","cores":0}}}}}`,
		wf + `"template":{"name":"pi","plugin":{"spark":{"sparkConf":{"` + strings.Repeat("k", 3000) + `":"v","spark.master":"local","spark.app.id":"x"},"driver":{"labels":{"sparkplug.io/node":"x"}}}}}}`,
		wf + `"template":{"name":"pi","plugin":{"spark":{"type":"Python","mainApplicationFile":"local:///a.py","image":"i","sparkConf":{"spark.hadoop.fs.s3a.secret.key":"hunter2"},"restartPolicy":{"type":"OnFailure","onFailureRetries":-1}}}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		st, ok, err := parseRequest(body)
		switch {
		case !ok:
			if st != nil || err != nil {
				t.Fatalf("not a spark step, yet step %+v, err %v", st, err)
			}
		case errors.Is(err, ErrMalformed):
			if st != nil {
				t.Fatalf("a malformed template gave a step %+v", st)
			}
		case err != nil:
			if st != nil {
				t.Fatalf("an invalid step gave a step %+v and %v", st, err)
			}
			checkNodeMessage(t, err)
		default:
			checkKey(t, body, st)
		}
	})
}

// parseRequest decodes a request body as the HTTP server does and parses
// its template as the core (package execute) does. ok is false for a body that is
// no request or a template that is not a spark step.
func parseRequest(body []byte) (st *Step, ok bool, err error) {
	var args executor.ExecuteTemplateArgs
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&args); err != nil {
		return nil, false, nil // 400 at the server
	}
	if args.Template == nil || args.Workflow == nil {
		return nil, false, nil // 400 at the core
	}
	return Parse(args.Template, spec.PluginDefaults{IngressURLFormat: "{{$appName}}.spark.example.com"})
}

// checkNodeMessage: the error of a step that cannot run is bounded by
// itself, and as the node's message (the core (package execute) renders it through
// state.Outcome and truncates it).
func checkNodeMessage(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if msg == "" || len(msg) > spec.MaxMessageBytes {
		t.Fatalf("the error of an invalid step is %d bytes, want 1 to %d: %.200q...", len(msg), spec.MaxMessageBytes, msg)
	}
	var invalid *spec.InvalidError
	if errors.As(err, &invalid) && (len(invalid.Errs) == 0 || !strings.HasPrefix(msg, "invalid spark body: ")) {
		t.Fatalf("an invalid body's error %q lists %d problems", msg, len(invalid.Errs))
	}
	node := spec.Truncate(state.Outcome{Phase: state.PhaseFailed, Detail: msg}.Message(), spec.MaxMessageBytes)
	if node == "" || len(node) > spec.MaxMessageBytes {
		t.Fatalf("node message of %d bytes, want 1 to %d", len(node), spec.MaxMessageBytes)
	}
}

// checkKey: the key is label-safe, the same for the same bytes, and
// survives Argo's round trip of the template through the TaskSet.
func checkKey(t *testing.T, body []byte, st *Step) {
	t.Helper()
	if st == nil || st.Body == nil || len(st.Key) != identity.KeyLength {
		t.Fatalf("a valid step %+v: want a body and a key of %d characters", st, identity.KeyLength)
	}
	again, ok, err := parseRequest(body)
	if !ok || err != nil || again.Key != st.Key {
		t.Fatalf("the same request gave key %q, then %v %v %v", st.Key, again, ok, err)
	}
	raw, err := json.Marshal(st.Template)
	if err != nil {
		t.Fatalf("encode the template: %v", err)
	}
	var stored wfv1.Template
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatalf("decode the re-encoded template: %v", err)
	}
	if key, err := Key(&stored); err != nil || key != st.Key {
		t.Fatalf("the round trip changed the key %s to %s (%v)", st.Key, key, err)
	}
}

// exampleRequests are template.execute request bodies for every spark
// template of examples/*.yaml, their input parameters substituted with
// their values or defaults as Argo would.
func exampleRequests(f *testing.F) [][]byte {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no examples: %v", err)
	}
	var out [][]byte
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, doc := range strings.Split(string(raw), "\n---") {
			var obj struct {
				Spec struct {
					Templates    []wfv1.Template `json:"templates"`
					WorkflowSpec struct {
						Templates []wfv1.Template `json:"templates"`
					} `json:"workflowSpec"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				f.Fatalf("%s: %v", file, err)
			}
			for _, tmpl := range append(obj.Spec.Templates, obj.Spec.WorkflowSpec.Templates...) {
				if tmpl.Plugin == nil {
					continue
				}
				vars := map[string]string{}
				for _, p := range tmpl.Inputs.Parameters {
					if v := p.Value; v != nil {
						vars["inputs.parameters."+p.Name] = v.String()
					} else if d := p.Default; d != nil {
						vars["inputs.parameters."+p.Name] = d.String()
					}
				}
				sub, _, err := Substitute(&tmpl, vars)
				if err != nil {
					f.Fatalf("%s: %v", file, err)
				}
				req, err := json.Marshal(executor.ExecuteTemplateArgs{
					Workflow: &executor.Workflow{ObjectMeta: executor.ObjectMeta{Name: "wf-x7k2p", Namespace: "jobs", UID: "u-1"}},
					Template: &sub,
				})
				if err != nil {
					f.Fatal(err)
				}
				out = append(out, req)
			}
		}
	}
	if len(out) < len(files) {
		f.Fatalf("%d spark templates in %d examples", len(out), len(files))
	}
	return out
}
