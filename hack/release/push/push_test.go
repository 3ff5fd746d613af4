package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// newRegistry is go-containerregistry's in-memory registry on 127.0.0.1,
// which takes only user:secret, and a Docker config that holds them
// ($DOCKER_CONFIG, what the default keychain reads): pushes that work
// here used the keychain.
func newRegistry(t *testing.T) string {
	t.Helper()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "secret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	config := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte("user:secret"))
	if err := os.WriteFile(filepath.Join(config, "config.json"), fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, host, auth), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", config)
	return host
}

var anyone = []remote.Option{remote.WithAuth(&authn.Basic{Username: "user", Password: "secret"})}

// writeArchive writes an OCI layout tar of one image index of two
// images, recorded as ref (as hack/image -index writes it), and returns
// the index.
func writeArchive(t *testing.T, archive, ref string) v1.ImageIndex {
	t.Helper()
	idx, err := random.Index(64, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AppendIndex(idx, layout.WithAnnotations(map[string]string{imageNameAnnotation: ref})); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return idx
}

// writeChart writes a packaged chart holding NAME/Chart.yaml and returns
// its bytes.
func writeChart(t *testing.T, file, chartName, chartYAML string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, f := range []struct{ name, body string }{
		{chartName + "/Chart.yaml", chartYAML},
		{chartName + "/values.yaml", "image: {}\n"},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The index goes to the name it was released as, under its own digest,
// with every platform's image; any other name is refused; without the
// keychain's credentials the registry refuses the push.
func TestPushIndex(t *testing.T) {
	host := newRegistry(t)
	archive := filepath.Join(t.TempDir(), "image.oci.tar")
	want := host + "/platform/sparkplug:v1.2.3"
	idx := writeArchive(t, archive, want)
	ctx := context.Background()

	ref, _ := name.NewTag(want)
	got, err := pushIndex(ctx, archive, ref, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		t.Fatal(err)
	}
	wantDigest, _ := idx.Digest()
	if got != wantDigest {
		t.Errorf("pushed %s, the index is %s", got, wantDigest)
	}
	pushed, err := remote.Index(ref, anyone...)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := pushed.Digest(); d != wantDigest {
		t.Errorf("the registry's %s is %s, want %s", ref, d, wantDigest)
	}
	m, _ := idx.IndexManifest()
	for _, desc := range m.Manifests {
		if _, err := remote.Image(ref.Context().Digest(desc.Digest.String()), anyone...); err != nil {
			t.Errorf("image %s of the index: %v", desc.Digest, err)
		}
	}

	other, _ := name.NewTag(host + "/elsewhere/sparkplug:v1.2.3")
	if _, err := pushIndex(ctx, archive, other, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err == nil ||
		!strings.Contains(err.Error(), "was released as "+want) {
		t.Errorf("push to another name: %v, want a refusal naming %s", err, want)
	}
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	if _, err := pushIndex(ctx, archive, ref, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err == nil {
		t.Error("a push without credentials succeeded")
	}
}

// The chart goes to CHARTS/NAME:VERSION as helm push lays it out:
// Helm's config media type over Chart.yaml as JSON, one layer that is the
// file byte for byte; the same chart pushes the same manifest.
func TestPushChart(t *testing.T) {
	host := newRegistry(t)
	file := filepath.Join(t.TempDir(), "sparkplug-1.2.3.tgz")
	tgz := writeChart(t, file, "sparkplug", "apiVersion: v2\nname: sparkplug\nversion: 1.2.3\ndescription: Spark steps\n")
	repo, _ := name.NewRepository(host + "/platform/charts")
	ctx := context.Background()
	tag, digest, err := pushChart(ctx, file, repo, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		t.Fatal(err)
	}
	if tag.String() != host+"/platform/charts/sparkplug:1.2.3" {
		t.Errorf("tag %s", tag)
	}
	desc, err := remote.Get(tag, anyone...)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest != digest {
		t.Errorf("the registry's manifest %s, push said %s", desc.Digest, digest)
	}
	var m v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(tgz)
	if m.Config.MediaType != helmConfigMediaType || len(m.Layers) != 1 || m.Layers[0].MediaType != helmChartMediaType ||
		m.Layers[0].Digest.Hex != fmt.Sprintf("%x", sum) || m.Annotations["org.opencontainers.image.version"] != "1.2.3" {
		t.Errorf("manifest %+v", m)
	}
	img, err := remote.Image(tag, anyone...)
	if err != nil {
		t.Fatal(err)
	}
	config, err := img.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]string
	if err := json.Unmarshal(config, &meta); err != nil || meta["name"] != "sparkplug" || meta["apiVersion"] != "v2" {
		t.Errorf("config %s (%v)", config, err)
	}
	if _, again, err := pushChart(ctx, file, repo, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil || again != digest {
		t.Errorf("pushed again: %s (%v), want %s", again, err, digest)
	}

	bad := filepath.Join(t.TempDir(), "bad.tgz")
	writeChart(t, bad, "x", "name: x\n")
	if _, _, err := pushChart(ctx, bad, repo); err == nil {
		t.Error("a chart without a version was pushed")
	}
}

// A layout archive with an entry outside its directory is refused.
func TestUntarRefusesEscapes(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "evil.tar")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	if err := tw.WriteHeader(&tar.Header{Name: "../evil", Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	f.Close()
	if err := untar(archive, t.TempDir()); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("untar: %v", err)
	}
}

// run pushes a whole release directory: both indexes, then the chart.
func TestRun(t *testing.T) {
	host := newRegistry(t)
	dir := t.TempDir()
	writeArchive(t, filepath.Join(dir, "sparkplug-v0.1.0-image.oci.tar"), host+"/p/sparkplug:v0.1.0")
	writeArchive(t, filepath.Join(dir, "sparkplug-ack-v0.1.0-image.oci.tar"), host+"/p/sparkplug-ack:v0.1.0")
	writeChart(t, filepath.Join(dir, "sparkplug-0.1.0.tgz"), "sparkplug", "apiVersion: v2\nname: sparkplug\nversion: 0.1.0\n")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-dir", dir, "-version", "v0.1.0", "-image", host + "/p/sparkplug", "-charts", host + "/p/charts"}, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pushed " + host + "/p/sparkplug:v0.1.0@sha256:", "pushed " + host + "/p/sparkplug-ack:v0.1.0@sha256:",
		"helm install sparkplug oci://" + host + "/p/charts/sparkplug --version 0.1.0"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, &stdout)
		}
	}
	if err := run(context.Background(), []string{"-dir", dir, "-version", "0.1.0", "-image", "x", "-charts", "y"}, &stdout, &stderr); err == nil {
		t.Error("a VERSION without its v was taken")
	}
}
