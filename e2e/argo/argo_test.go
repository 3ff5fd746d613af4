package argo

import (
	"slices"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	out := []byte("time=\"...\" level=info msg=\"index config\"\nworkflow-controller: v3.7.18+unknown\n  BuildDate: 1970-01-01T00:00:00Z\n")
	if got := versionOf(out, "workflow-controller"); got != "v3.7.18+unknown" {
		t.Errorf("versionOf = %q", got)
	}
	if got := versionOf([]byte("nothing"), "workflow-controller"); got != "unknown" {
		t.Errorf("versionOf without a version = %q", got)
	}
}

// The controller runs with plugins on, without leader election, with fast
// requeues, on the admin kubeconfig.
func TestControllerSettings(t *testing.T) {
	env := ControllerEnv(false)
	for _, want := range []string{"ARGO_EXECUTOR_PLUGINS=true", "LEADER_ELECTION_DISABLE=true", "DEFAULT_REQUEUE_TIME=1s", "ARGO_AGENT_PATCH_RATE=1s"} {
		if !slices.Contains(env, want) {
			t.Errorf("controller env %v lacks %s", env, want)
		}
	}
	defaults := ControllerEnv(true)
	for _, v := range defaults {
		if strings.HasPrefix(v, "DEFAULT_REQUEUE_TIME=") || strings.HasPrefix(v, "ARGO_AGENT_PATCH_RATE=") {
			t.Errorf("controller env with Argo's defaults sets %s", v)
		}
	}
	if !slices.Contains(defaults, "ARGO_EXECUTOR_PLUGINS=true") {
		t.Errorf("controller env with Argo's defaults %v lacks ARGO_EXECUTOR_PLUGINS=true", defaults)
	}
	args := strings.Join(ControllerArgs("/k", ExecutorImage), " ")
	for _, want := range []string{"--kubeconfig=/k", "--executor-plugins", "--namespace=argo", "--configmap=workflow-controller-configmap"} {
		if !strings.Contains(args, want) {
			t.Errorf("controller args %q lack %s", args, want)
		}
	}
}
