package kube

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RESTConfig loads kubeconfig, or the in-cluster ServiceAccount's config
// when kubeconfig is empty.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster config (set --kubeconfig outside a cluster): %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}

// retryReadiness is how long WatchReadiness waits between tries.
var retryReadiness = 2 * time.Second

// WatchReadiness asks the API server for its version until it answers or
// ctx ends, passing each try's outcome to set (nil once it answered): a
// process is ready once it can reach the API server.
func WatchReadiness(ctx context.Context, kube kubernetes.Interface, set func(error), log *slog.Logger) {
	for {
		_, err := kube.Discovery().ServerVersion()
		set(err)
		if err == nil {
			return
		}
		log.Warn("API server not reachable yet", "error", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryReadiness):
		}
	}
}
