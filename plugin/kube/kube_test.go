package kube

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

func TestRESTConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := RESTConfig(path)
	if err != nil || cfg.Host != "https://127.0.0.1:6443" || cfg.BearerToken != "t" {
		t.Fatalf("RESTConfig(%s) = %+v, %v", path, cfg, err)
	}
	if _, err := RESTConfig(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "load kubeconfig") {
		t.Errorf("a missing kubeconfig: %v", err)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := RESTConfig(""); err == nil || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Errorf("outside a cluster without a kubeconfig: %v", err)
	}
}

// The fake clientset stands in for an API server that refuses the first
// tries: an injected error a real one cannot be made to give on cue.
func TestWatchReadinessTriesUntilTheAPIServerAnswers(t *testing.T) {
	retryReadiness = time.Millisecond
	kube := fake.NewClientset()
	kube.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.33.0"}
	calls := 0
	kube.PrependReactor("get", "version", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls <= 2 {
			return true, nil, errors.New("connection refused")
		}
		return true, nil, nil
	})
	var got []error
	WatchReadiness(context.Background(), kube, func(err error) { got = append(got, err) }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if len(got) != 3 || got[0] == nil || got[1] == nil || got[2] != nil {
		t.Fatalf("readiness went %v, want not ready twice, then ready", got)
	}

	// An API server that never answers: it stops with its context.
	calls = -1 << 30
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	got = nil
	WatchReadiness(ctx, kube, func(err error) { got = append(got, err) }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if len(got) == 0 || got[len(got)-1] == nil {
		t.Errorf("readiness went %v, want never ready", got)
	}
}

func TestServiceAccountOfToken(t *testing.T) {
	jwt := func(claims string) string {
		return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".c2ln"
	}
	for _, tc := range []struct{ name, token, want string }{
		{"a bound token", jwt(`{"aud":["https://kubernetes.default.svc"],"sub":"system:serviceaccount:ns:argo-spark"}`), "argo-spark"},
		{"a legacy token", jwt(`{"iss":"kubernetes/serviceaccount","sub":"system:serviceaccount:ns:spark-executor-plugin"}`), "spark-executor-plugin"},
		{"a user's token", jwt(`{"sub":"alice"}`), ""},
		{"not a JWT", "abc", ""},
		{"a payload that is no JSON", "a.!!.c", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ServiceAccountOfToken(tc.token); got != tc.want {
				t.Fatalf("ServiceAccountOfToken = %q, want %q", got, tc.want)
			}
		})
	}
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(jwt(`{"sub":"system:serviceaccount:ns:p"}`)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := TokenServiceAccount(&rest.Config{BearerTokenFile: file}); got != "p" {
		t.Fatalf("TokenServiceAccount from a file = %q, want p", got)
	}
}
