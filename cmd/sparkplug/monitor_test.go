package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/monitor"
)

// monitor --help lists the flags the chart passes, with the library's
// defaults (monitor.DefaultOptions), defined once.
func TestMonitorFlags(t *testing.T) {
	t.Setenv(monitor.EnvPodNamespace, "")
	var out bytes.Buffer
	if err := run([]string{"monitor", "--help"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	d := monitor.DefaultOptions()
	for flag, want := range map[string]string{
		"--namespaces": "", "--metrics-labels": "", "--kubeconfig": "", "--log-level": "info", "--log-format": "json",
		"--metrics-addr": d.MetricsAddr, "--health-addr": d.HealthAddr, "--ttl-interval": d.TTLInterval.String(),
		"--leader-elect": "true", "--leader-election-namespace": "", "--leader-election-id": d.LeaderElectionID,
		"--kube-api-qps": "20", "--kube-api-burst": "40", "--metrics-job-start-latency-buckets": "30,60,90,120,150,180,210,240,270,300",
	} {
		line := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, flag+" ") {
				line = l
			}
		}
		switch {
		case line == "":
			t.Errorf("monitor --help lacks %s", flag)
		case want != "" && !strings.Contains(line, "(default "+want) && !strings.Contains(line, `(default "`+want):
			t.Errorf("monitor --help: %s does not default to %s: %q", flag, want, line)
		}
	}
}

// $POD_NAMESPACE, which the Deployment sets, is the default of the
// namespaces and of the Lease's namespace.
func TestMonitorDefaultsToItsNamespace(t *testing.T) {
	t.Setenv(monitor.EnvPodNamespace, "sparkplug")
	o := monitorOptions{}
	fs := monitorFlags(&o, &bytes.Buffer{})
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if len(o.Namespaces) != 1 || o.Namespaces[0] != "sparkplug" || o.LeaderElectionNamespace != "sparkplug" {
		t.Errorf("namespaces %q, Lease namespace %q; want both sparkplug", o.Namespaces, o.LeaderElectionNamespace)
	}
	if err := fs.Parse([]string{"--namespaces", "jobs,etl", "--namespaces", "ml", "--metrics-job-start-latency-buckets", "10,20", "--metrics-job-start-latency-buckets", "40"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.Namespaces, ","); got != "jobs,etl,ml" {
		t.Errorf("--namespaces given: %q, want jobs,etl,ml", got)
	}
	if len(o.StartLatencyBuckets) != 3 || o.StartLatencyBuckets[2] != 40 {
		t.Errorf("--metrics-job-start-latency-buckets given: %v, want [10 20 40]", o.StartLatencyBuckets)
	}
}

// A bad setting is refused before anything listens, naming the flag.
func TestMonitorRejectsBadOptions(t *testing.T) {
	t.Setenv(monitor.EnvPodNamespace, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--namespaces: is required"},
		{[]string{"--namespaces", "jobs"}, "--leader-election-namespace: is required with --leader-elect"},
		{[]string{"--namespaces", "Jobs", "--leader-elect=false"}, `--namespaces: "Jobs" is not a namespace name`},
		{[]string{"--namespaces", "jobs", "--leader-elect=false", "--metrics-labels", "namespace"}, "--metrics-labels: "},
		{[]string{"--namespaces", "jobs", "--leader-elect=false", "--metrics-job-start-latency-buckets", "60,30"}, "--metrics-job-start-latency-buckets: the bounds must increase"},
		{[]string{"--namespaces", "jobs", "--leader-elect=false", "--metrics-job-start-latency-buckets", "sixty"}, `"sixty" is not a number`},
		{[]string{"--namespaces", "jobs", "--leader-elect=false", "--log-format", "xml"}, "--log-format must be json or text"},
	} {
		err := run(append([]string{"monitor"}, tc.args...), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("monitor %q: %v (status %d), want %q and 2", tc.args, err, exitCode(err), tc.want)
		}
	}
}
