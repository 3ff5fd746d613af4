package monitor

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/setting"
)

func TestValidate(t *testing.T) {
	valid := func() Options {
		o := DefaultOptions()
		o.Namespaces = []string{"jobs", "etl"}
		o.LeaderElectionNamespace = "sparkplug"
		return o
	}
	if o := valid(); o.Validate() != nil {
		t.Fatalf("the defaults with namespaces: %v", o.Validate())
	}
	for _, tc := range []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.Namespaces = nil }, "--namespaces: is required"},
		{func(o *Options) { o.Namespaces = []string{"Jobs"} }, `--namespaces: "Jobs" is not a namespace name`},
		{func(o *Options) { o.Namespaces = []string{"jobs", "jobs"} }, `--namespaces: "jobs" is given twice`},
		{func(o *Options) { o.MetricsLabels = []string{"namespace"} }, "--metrics-labels: "},
		{func(o *Options) { o.StartLatencyBuckets = []float64{60, 30} }, "--metrics-job-start-latency-buckets: the bounds must increase"},
		{func(o *Options) { o.StartLatencyBuckets = nil }, "--metrics-job-start-latency-buckets: give at least one"},
		{func(o *Options) { o.TTLInterval = 0 }, "--ttl-interval: must be positive"},
		{func(o *Options) { o.QPS = 0 }, "--kube-api-qps: "},
		{func(o *Options) { o.MetricsAddr = "" }, "--metrics-addr: is required"},
		{func(o *Options) { o.LeaderElectionNamespace = "" }, "--leader-election-namespace: is required with --leader-elect"},
		{func(o *Options) { o.LeaderElectionID = "Monitor!" }, "--leader-election-id: "},
		{func(o *Options) { o.RenewDeadline = o.LeaseDuration }, "the Lease's timing"},
	} {
		o := valid()
		tc.change(&o)
		err := setting.Flags(o.Validate())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate = %v, want %q", err, tc.want)
		}
	}
	// Without leader election no Lease is needed.
	o := valid()
	o.LeaderElect, o.LeaderElectionNamespace, o.LeaseDuration = false, "", time.Second
	if err := o.Validate(); err != nil {
		t.Errorf("without leader election: %v", err)
	}
}
