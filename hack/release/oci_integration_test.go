//go:build integration

package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// The release's chart through an OCI registry, as docs/install.md has it:
// `helm push sparkplug-X.Y.Z.tgz oci://HOST/REPO`, then `helm show chart`,
// `helm template` (what `helm install` renders) and `helm pull` of
// oci://HOST/REPO/sparkplug --version X.Y.Z. The registry is
// go-containerregistry's in-memory one (pkg/registry), on 127.0.0.1 over
// plain HTTP; the pulled chart is the pushed file byte for byte, its
// manifest the digest helm push printed, its one layer that file.
func TestChartThroughOCIRegistry(t *testing.T) {
	out, helmBin := buildRelease(t)
	chartVersion := strings.TrimPrefix(version, "v")
	chart := filepath.Join(out, "sparkplug-"+chartVersion+".tgz")
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	repo := "oci://" + host + "/charts"
	home := t.TempDir()
	helm := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(helmBin, args...)
		cmd.Env = append(os.Environ(),
			"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
			"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
			"HELM_DATA_HOME="+filepath.Join(home, "data"),
			"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"))
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}

	pushed := helm("push", chart, repo, "--plain-http")
	m := regexp.MustCompile(`(?m)^Digest: (sha256:[0-9a-f]{64})$`).FindStringSubmatch(pushed)
	if m == nil {
		t.Fatalf("helm push printed no digest:\n%s", pushed)
	}
	pushDigest := m[1]

	// What the registry holds: one manifest, the digest helm printed, with
	// the chart file as its layer.
	ref, err := name.ParseReference(host+"/charts/sparkplug:"+chartVersion, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(ref)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest.String() != pushDigest {
		t.Errorf("the registry's manifest %s, helm push printed %s", desc.Digest, pushDigest)
	}
	var manifest v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &manifest); err != nil {
		t.Fatal(err)
	}
	file := read(t, chart)
	sum := sha256.Sum256(file)
	if len(manifest.Layers) != 1 || manifest.Layers[0].Digest.Hex != hex.EncodeToString(sum[:]) ||
		manifest.Config.MediaType != "application/vnd.cncf.helm.config.v1+json" {
		t.Errorf("the chart's manifest: config %s, layers %+v; want the chart file's sha256 %x", manifest.Config.MediaType, manifest.Layers, sum)
	}

	chartRef := repo + "/sparkplug"
	shown := helm("show", "chart", chartRef, "--version", chartVersion, "--plain-http")
	if !strings.Contains(shown, "\nname: sparkplug\n") || !strings.Contains(shown, "\nversion: "+chartVersion+"\n") {
		t.Errorf("helm show chart from the registry:\n%s", shown)
	}
	digest, _ := indexOf(t, filepath.Join(out, "sparkplug-"+version+"-image.oci.tar"))
	rendered := helm("template", "sparkplug", chartRef, "--version", chartVersion, "--plain-http", "--namespace", "spark-jobs")
	if !strings.Contains(rendered, image+":"+version+"@"+digest) {
		t.Errorf("the chart from the registry does not run the release's index %s", digest)
	}
	dir := t.TempDir()
	pulled := helm("pull", chartRef, "--version", chartVersion, "--plain-http", "-d", dir)
	if !strings.Contains(pulled, "Digest: "+pushDigest) {
		t.Errorf("helm pull: %s, want digest %s", pulled, pushDigest)
	}
	if got := read(t, filepath.Join(dir, filepath.Base(chart))); !bytes.Equal(got, file) {
		t.Errorf("the pulled chart (%d bytes) is not the pushed one (%d bytes)", len(got), len(file))
	}

	// The Artifact Hub repository metadata, pushed next to the chart by
	// docs/install.md's own oras push (its registry made this one's), is
	// what Artifact Hub reads: the tag artifacthub.io of the chart's
	// repository, a manifest whose config and one layer have Artifact
	// Hub's media types, the layer the file byte for byte.
	oras := filepath.Join(filepath.Dir(helmBin), "oras")
	args := docsOrasPush(t, host+"/charts")
	cmd := exec.Command(oras, append(args[1:], "--plain-http")...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "HOME="+home)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, b)
	}
	metaRef, err := name.ParseReference(host+"/charts/sparkplug:artifacthub.io", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := remote.Get(metaRef)
	if err != nil {
		t.Fatalf("the tag artifacthub.io: %v", err)
	}
	var metaManifest v1.Manifest
	if err := json.Unmarshal(meta.Manifest, &metaManifest); err != nil {
		t.Fatal(err)
	}
	repoFile := read(t, filepath.Join("..", "..", "manifests", "chart", "artifacthub-repo.yml"))
	repoSum := sha256.Sum256(repoFile)
	if metaManifest.Config.MediaType != "application/vnd.cncf.artifacthub.config.v1+yaml" || len(metaManifest.Layers) != 1 ||
		metaManifest.Layers[0].MediaType != "application/vnd.cncf.artifacthub.repository-metadata.layer.v1.yaml" ||
		metaManifest.Layers[0].Digest.Hex != hex.EncodeToString(repoSum[:]) {
		t.Errorf("the Artifact Hub metadata's manifest: config %s, layers %+v; want Artifact Hub's media types and the file's sha256 %x",
			metaManifest.Config.MediaType, metaManifest.Layers, repoSum)
	}
	// The chart's tag is untouched by it.
	if again, err := remote.Get(ref); err != nil || again.Digest.String() != pushDigest {
		t.Errorf("after the metadata push the chart's tag names %v (%v), want %s", again, err, pushDigest)
	}
}

// docsOrasPush is docs/install.md's oras push command, as words, its
// registry repository (registry.example.com/platform/charts) made repo.
func docsOrasPush(t *testing.T, repo string) []string {
	t.Helper()
	doc := string(read(t, filepath.Join("..", "..", "docs", "install.md")))
	start := strings.Index(doc, "\noras push ")
	if start < 0 {
		t.Fatal("docs/install.md has no oras push command")
	}
	end := strings.Index(doc[start:], "\n```")
	if end < 0 {
		t.Fatal("docs/install.md: the oras push command's block does not end")
	}
	command := strings.ReplaceAll(doc[start+1:start+end], "\\\n", " ")
	if !strings.Contains(command, "registry.example.com/platform/charts/") {
		t.Fatalf("docs/install.md's oras push does not name registry.example.com/platform/charts: %s", command)
	}
	return strings.Fields(strings.ReplaceAll(command, "registry.example.com/platform/charts", repo))
}
