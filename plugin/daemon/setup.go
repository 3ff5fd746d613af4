package daemon

import (
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"slices"

	"k8s.io/client-go/rest"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/kube"
	"github.com/sparkplug-io/sparkplug/plugin/metrics"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/policy"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/templates"
)

// Client is how a process reaches the API server.
type Client struct {
	// Kubeconfig is a kubeconfig file; empty: the in-cluster service
	// account.
	Kubeconfig string
	// QPS and Burst are the client's rate limits.
	QPS   float32
	Burst int
	// UserAgent names the process in the API server's logs.
	UserAgent string
	// WrapTransport, when set, wraps the client transport (tests count
	// API requests with it).
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// RESTConfig is c's REST config.
func (c Client) RESTConfig() (*rest.Config, error) {
	cfg, err := kube.RESTConfig(c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	if c.WrapTransport != nil {
		cfg.Wrap(c.WrapTransport)
	}
	cfg.QPS, cfg.Burst = c.QPS, c.Burst
	cfg.UserAgent = c.UserAgent
	return cfg, nil
}

// Setup is what a process that runs Spark steps (`sparkplug serve`,
// `sparkplug controller`) starts from.
type Setup struct {
	Client Client
	// Policy is what a run's objects may be; Start adds the account the
	// process acts as to its plugin accounts.
	Policy policy.Policy
	// TemplatesDir overrides the built-in object templates; empty: none.
	TemplatesDir string
	// PprofAddr serves Go's profiles there; empty: nowhere.
	PprofAddr string
	// Limits bound the clients of the profile server.
	Limits edge.Limits
}

// Steps is the set-up a process that runs Spark steps shares with the
// other mode: the clients of one REST config, the policy it enforces,
// the object builder, Events, the step metrics.
type Steps struct {
	// Config is the REST config the clients were made of.
	Config  *rest.Config
	Clients scope.Clients
	// Policy is Setup's, with the process's own account among the
	// plugin accounts: no driver runs as it.
	Policy  policy.Policy
	Builder *objects.Builder
	// Events outlive the process's context: its last Events (the
	// deletions of a shutdown sweep) are recorded after SIGTERM, and
	// Flush waits for them.
	Events  *Events
	Metrics *metrics.Metrics
	stops   []func()
}

// Start sets up s: the REST config and clients, the policy (logged),
// the templates, Events under component "sparkplug", the metrics, and
// the profile server when asked. Close undoes it.
func Start(s Setup, log *slog.Logger) (*Steps, error) {
	cfg, err := s.Client.RESTConfig()
	if err != nil {
		return nil, err
	}
	p := &Steps{Config: cfg, Policy: s.Policy}
	if sa := kube.TokenServiceAccount(cfg); sa != "" && !slices.Contains(p.Policy.PluginServiceAccounts, sa) {
		// The account this process acts as, whatever the install named it.
		p.Policy.PluginServiceAccounts = append(slices.Clone(p.Policy.PluginServiceAccounts), sa)
	}
	log.Info("policy", "plugin_service_accounts", p.Policy.PluginServiceAccounts, "pod_security_level", p.Policy.PodSecurity)
	if p.Clients, err = Clients(cfg); err != nil {
		return nil, err
	}
	var tmpl fs.FS = templates.FS
	if s.TemplatesDir != "" {
		tmpl = os.DirFS(s.TemplatesDir)
	}
	if p.Builder, err = objects.New(tmpl); err != nil {
		return nil, fmt.Errorf("load templates: %w", err)
	}
	if s.PprofAddr != "" {
		_, stop, err := ServePprof(s.PprofAddr, s.Limits, log)
		if err != nil {
			return nil, err
		}
		p.stops = append(p.stops, stop)
	}
	p.Events = NewEvents(p.Clients.Kube, "sparkplug")
	p.stops = append(p.stops, p.Events.Shutdown)
	p.Metrics = metrics.New()
	return p, nil
}

// Close stops recording Events and serving profiles.
func (p *Steps) Close() {
	for _, stop := range slices.Backward(p.stops) {
		stop()
	}
}
