package execute

import (
	"strings"
	"testing"

	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// bodyWith is a SparkPi body with extra fields, parsed as a plugin with
// options o parses it.
func bodyWith(t *testing.T, o Options, extra string) *spec.SparkApplicationSpec {
	t.Helper()
	raw := `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar"`
	if extra != "" {
		raw += "," + extra
	}
	s, err := spec.ParseWith([]byte(raw+"}"), o.defaults())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every result that names an application id, while the driver waits, runs
// and once it ended, reports its page on the History Server: the
// plugin's, or the step's own, or none when the step turns it off.
func TestResultReportsTheHistoryUI(t *testing.T) {
	plugin := DefaultOptions()
	plugin.HistoryServerURL = "https://spark-history.example.com/"
	outcomes := map[string]state.Outcome{
		"pending":   {State: spark.StateSubmitted, Phase: state.PhasePending},
		"running":   {State: spark.StateRunning, Phase: state.PhaseRunning},
		"completed": {State: spark.StateCompleted, Phase: state.PhaseSucceeded},
		"failed":    {State: spark.StateFailed, Phase: state.PhaseFailed, Detail: "driver exited 1"},
	}
	tests := []struct {
		name  string
		opts  Options
		extra string
		want  string // the base the output starts with; "" for no output
	}{
		{"the plugin's", plugin, "", "https://spark-history.example.com"},
		{"the step's over the plugin's", plugin, `"sparkplug":{"historyServerURL":"http://shs.team-a.svc:18080"}`, "http://shs.team-a.svc:18080"},
		{"the step's, the plugin has none", DefaultOptions(), `"sparkplug":{"historyServerURL":"http://shs.team-a.svc:18080"}`, "http://shs.team-a.svc:18080"},
		{"turned off for the step", plugin, `"sparkplug":{"historyServerURL":""}`, ""},
		{"none anywhere", DefaultOptions(), "", ""},
	}
	c := &Core{}
	for _, tt := range tests {
		body := bodyWith(t, tt.opts, tt.extra)
		for phase, o := range outcomes {
			d := driver("node-1", 1, running())
			appID := d.Labels[spark.LabelAppSelector]
			r := asReply(c.result(o, d, false, body, nil))
			got, ok := outputParam(r, spark.OutputHistoryUI)
			switch {
			case tt.want == "" && ok:
				t.Errorf("%s, %s: history-ui %q, want none", tt.name, phase, got)
			case tt.want != "" && got != tt.want+"/history/"+appID+"/":
				t.Errorf("%s, %s: history-ui %q, want %s/history/%s/", tt.name, phase, got, tt.want, appID)
			}
			if param(r, spark.OutputApplicationID) != appID {
				t.Errorf("%s, %s: application-id %q, want %s", tt.name, phase, param(r, spark.OutputApplicationID), appID)
			}
		}
	}
	// No driver, no application id, no page.
	pending := state.Outcome{State: spark.StateSubmitted, Phase: state.PhasePending}
	if _, ok := outputParam(asReply(c.result(pending, nil, false, bodyWith(t, plugin, ""), nil)), spark.OutputHistoryUI); ok {
		t.Error("a result without a driver reports history-ui")
	}
}

// A run known only by what the TaskSet recorded (a ghost) keeps its page,
// since it is built from the recorded id; an id that no label could hold
// (someone wrote the TaskSet) gives none rather than a path of its own.
func TestHistoryUIOfRecordedIDs(t *testing.T) {
	o := DefaultOptions()
	o.HistoryServerURL = "https://spark-history.example.com"
	body := bodyWith(t, o, "")
	done := state.Outcome{State: spark.StateCompleted, Phase: state.PhaseSucceeded}
	for id, want := range map[string]string{
		"spark-00112233445566778899aabbccddeeff": "https://spark-history.example.com/history/spark-00112233445566778899aabbccddeeff/",
		"../../admin/":                           "",
		"spark-1/../../x?y=<b>":                  "",
		strings.Repeat("s", 4000):                "",
	} {
		g := ghostDriver("node-1", 1, id)
		got, _ := outputParam(asReply((&Core{}).result(done, g, false, body, nil)), spark.OutputHistoryUI)
		if got != want {
			t.Errorf("id %.40q: history-ui %q, want %q", id, got, want)
		}
	}
}

// outputParam is a named output and whether the reply has it at all.
func outputParam(r executor.ExecuteTemplateReply, name string) (string, bool) {
	if r.Node == nil || r.Node.Outputs == nil {
		return "", false
	}
	for _, p := range r.Node.Outputs.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String(), true
		}
	}
	return "", false
}
