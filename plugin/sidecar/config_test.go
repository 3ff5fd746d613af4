package sidecar

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/setting"
)

func TestDefaultConfigIsValid(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Core.Resync != 2*time.Second || c.Core.Workers != 16 || c.Core.Launcher != "native" || c.Addr != "127.0.0.1:4355" {
		t.Fatalf("defaults %+v", c)
	}
}

// Profiles are served on loopback addresses only.
func TestPprofOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:6060", "[::1]:6060", "localhost:6060", "127.0.0.1:0"} {
		c := DefaultConfig()
		c.PprofAddr = addr
		if err := c.Validate(); err != nil {
			t.Errorf("pprof-addr %q refused: %v", addr, err)
		}
	}
}

// Every refusal names its setting, so a front end can say which flag or
// value to fix.
func TestValidateNamesTheSetting(t *testing.T) {
	for _, tc := range []struct {
		change  func(*Config)
		setting string
	}{
		{func(c *Config) { c.Addr = "" }, "addr"},
		{func(c *Config) { c.TokenFile = "" }, "token-file"},
		{func(c *Config) { c.PodName = "agent" }, "pod-name"},
		{func(c *Config) { c.TTLInterval = -time.Second }, "ttl-interval"},
		{func(c *Config) { c.Burst = 0 }, "kube-api-qps"},
		{func(c *Config) { c.PprofAddr = ":6060" }, "pprof-addr"},
		{func(c *Config) { c.PprofAddr = "0.0.0.0:6060" }, "pprof-addr"},
		{func(c *Config) { c.PprofAddr = "10.0.0.7:6060" }, "pprof-addr"},
		{func(c *Config) { c.PprofAddr = "127.0.0.1" }, "pprof-addr"},
		{func(c *Config) { c.Core.Resync = -time.Second }, "resync"},
		{func(c *Config) { c.Core.Workers = -1 }, "workers"},
		{func(c *Config) { c.Core.Launcher = "yarn" }, "launcher"},
		{func(c *Config) { c.Core.Submit.Timeout = -time.Second }, "submit-timeout"},
		{func(c *Config) { c.Core.IngressURLFormat = "{{$nope}}" }, "ingress-url-format"},
		{func(c *Config) { c.Core.HistoryServerURL = "spark-history:18080" }, "history-server-url"},
		{func(c *Config) { c.Core.ProgressInterval = -time.Second }, "progress-interval"},
		{func(c *Config) { c.Core.ProgressInterval = time.Millisecond }, "progress-interval"},
	} {
		c := DefaultConfig()
		tc.change(&c)
		err := c.Validate()
		var se *setting.Error
		if !errors.As(err, &se) || se.Name != tc.setting || strings.HasPrefix(err.Error(), "--") {
			t.Errorf("want a refusal of %s, got %v", tc.setting, err)
		}
	}
}
