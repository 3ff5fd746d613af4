package daemon

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"

	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
)

// Clients are the typed Kubernetes, Argo and dynamic clients of cfg.
// The Kubernetes one speaks protobuf, as Kubernetes' own controllers do:
// a process following a thousand drivers lists and watches their pods,
// ConfigMaps and Services, which decode with far less garbage than JSON.
// Argo's resources are custom resources, JSON only.
func Clients(cfg *rest.Config) (scope.Clients, error) {
	pb := rest.CopyConfig(cfg)
	pb.ContentType = runtime.ContentTypeProtobuf
	pb.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	kube, err := kubernetes.NewForConfig(pb)
	if err != nil {
		return scope.Clients{}, fmt.Errorf("kubernetes client: %w", err)
	}
	wf, err := wfclient.NewForConfig(cfg)
	if err != nil {
		return scope.Clients{}, fmt.Errorf("argo client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return scope.Clients{}, fmt.Errorf("dynamic client: %w", err)
	}
	return scope.Clients{Kube: kube, Workflows: wf, Dynamic: dyn}, nil
}

// Serve serves h at addr, under limits, until stop is called; what is
// names it in errors and the log.
func Serve(what, addr string, h http.Handler, limits edge.Limits, log *slog.Logger) (bound string, stop func(), err error) {
	return serve(what, addr, edge.HTTPServer(h, limits), log)
}

func serve(what, addr string, srv *http.Server, log *slog.Logger) (bound string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("listen for %s on %s: %w", what, addr, err)
	}
	go func() { _ = srv.Serve(ln) }()
	log.Info("serving "+what, "addr", ln.Addr().String())
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// ServePprof serves Go's profiles at addr, under limits but with no write
// timeout (a CPU profile or trace takes its seconds), until stop is
// called. The caller checks that addr is a loopback address.
func ServePprof(addr string, limits edge.Limits, log *slog.Logger) (bound string, stop func(), err error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := edge.HTTPServer(mux, limits)
	srv.WriteTimeout = 0
	return serve("Go profiles", addr, srv, log)
}

// Loopback says whether addr (host:port) listens on a loopback address
// only; an empty host listens on every interface.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
