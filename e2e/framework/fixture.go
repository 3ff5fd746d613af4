package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

const (
	// LabelTest names the test that submitted a workflow.
	LabelTest = "e2e.sparkplug.test/test"
	// DefaultTimeout bounds each wait of a fixture.
	DefaultTimeout = 2 * time.Minute
	// pollInterval is how often waits look at the workflow.
	pollInterval = 100 * time.Millisecond
	// dumpLines is how much of each log a failed test prints.
	dumpLines = 40
)

// dump prints what a failed test needs to see: the nodes and what they
// went through, the Spark pods, and the ends of the logs.
func (w *When) dump() {
	if w.wf == nil {
		return
	}
	t := w.t
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %s: %s %q\n", w.wf.Name, w.wf.Status.Phase, w.wf.Status.Message)
	ids := make([]string, 0, len(w.history))
	for id := range w.history {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		h := w.history[id]
		fmt.Fprintf(&b, "  node %s (%s):\n", h.displayName, id)
		for _, s := range h.states {
			fmt.Fprintf(&b, "    %s\n", s)
		}
	}
	for _, role := range []string{spark.RoleDriver, spark.RoleExecutor} {
		pods, _ := w.env.sparkPods(context.Background(), w.wf, role)
		for _, p := range pods {
			fmt.Fprintf(&b, "  %s %s: %s %s node-id=%s\n", role, p.Name, p.Status.Phase, p.Status.Reason, p.Annotations[spark.AnnotationNodeID])
		}
	}
	t.Log(b.String())
	t.Logf("sparkplug sidecar logs, last %d lines of each:\n%s", dumpLines, w.env.Sidecars.LogTail(w.wf.Name, dumpLines))
	t.Logf("workflow-controller log, lines about %s:\n%s", w.wf.Name, grepTail(w.env.ControllerLogTail(2000), w.wf.Name, dumpLines))
	for _, p := range w.env.Agents.Logs() {
		if strings.Contains(filepath.Base(p), w.wf.Name) {
			b, _ := os.ReadFile(p)
			t.Logf("agent log %s, last %d lines:\n%s", p, dumpLines, grepTail(string(b), "", dumpLines))
		}
	}
}

// grepTail returns the last n lines of s that contain sub.
func grepTail(s, sub string, n int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return strings.Join(out, "\n")
}

// convert decodes a YAML-decoded object into a typed one, strictly.
func convert(t *testing.T, obj map[string]any, into any) {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("decode %v: %v", obj["kind"], err)
	}
}

// labelValue makes a test name a label value.
func labelValue(s string) string {
	s = regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(s, "_")
	if len(s) > 63 {
		s = s[len(s)-63:]
	}
	return strings.Trim(s, "._-")
}
