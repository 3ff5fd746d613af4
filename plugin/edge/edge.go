package edge

const (
	// ExecutePath is where the Argo agent posts template.execute.
	ExecutePath = "/api/v1/template.execute"
	// DefaultAddr is where a server the agent calls listens: loopback
	// (only the agent, in the same pod, calls it) at the port plugin.yaml
	// names.
	DefaultAddr = "127.0.0.1:4355"
	// DefaultTokenFile is where Argo mounts the bearer token the agent
	// sends.
	DefaultTokenFile = "/var/run/argo/token"
)
