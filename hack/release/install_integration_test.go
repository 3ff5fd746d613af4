//go:build integration

package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// docsRegistry is the registry docs/install.md's install from a clone
// names; the test puts its own in its place.
const docsRegistry = "registry.example.com/platform"

// docs/install.md's install from a clone, as the page has it: its first
// block (make release, sha256sum -c, make push) run word for word in a
// copy of the repository against go-containerregistry's in-memory
// registry on 127.0.0.1, which takes only the credentials of a Docker
// config (what make push's keychain reads); then the registry holds both
// indexes under the digests the release's bundles pin and the chart byte
// for byte, and the second block's helm install, run as helm template
// against the registry, renders the release's index, pinned.
func TestInstallFromAClone(t *testing.T) {
	_, helmBin := buildRelease(t)
	build, install := docsCloneBlocks(t)

	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "release" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	prefix := host + "/platform"
	home := t.TempDir()
	config := filepath.Join(home, "docker", "config.json")
	if err := os.MkdirAll(filepath.Dir(config), 0o755); err != nil {
		t.Fatal(err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte("release:s3cret"))
	if err := os.WriteFile(config, fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, host, auth), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "DOCKER_CONFIG="+filepath.Dir(config),
		"HELM_REGISTRY_CONFIG="+config,
		"HELM_CONFIG_HOME="+filepath.Join(home, "helm", "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "helm", "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "helm", "data"),
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"))

	clone := copyRepository(t)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.ReplaceAll(build, docsRegistry, prefix))
	cmd.Dir = clone
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docs/install.md's first block: %v\n%s", err, b)
	}

	out := filepath.Join(clone, "bin", "release", "v0.1.0")
	keychain := remote.WithAuthFromKeychain(authn.DefaultKeychain)
	t.Setenv("DOCKER_CONFIG", filepath.Dir(config))
	digest, _ := indexOf(t, filepath.Join(out, "sparkplug-v0.1.0-image.oci.tar"))
	ackDigest, _ := indexOf(t, filepath.Join(out, "sparkplug-ack-v0.1.0-image.oci.tar"))
	for _, c := range []struct{ repo, digest, bundle string }{
		{prefix + "/sparkplug", digest, "sparkplug-v0.1.0-install.yaml"},
		{prefix + "/sparkplug-ack", ackDigest, "sparkplug-v0.1.0-controller-install.yaml"},
	} {
		ref, err := name.NewTag(c.repo + ":v0.1.0")
		if err != nil {
			t.Fatal(err)
		}
		idx, err := remote.Index(ref, keychain)
		if err != nil {
			t.Fatalf("%s in the registry: %v", ref, err)
		}
		if d, _ := idx.Digest(); d.String() != c.digest {
			t.Errorf("%s is %s in the registry, the release's index %s", ref, d, c.digest)
		}
		if pinned := c.repo + ":v0.1.0@" + c.digest; !strings.Contains(string(read(t, filepath.Join(out, c.bundle))), pinned) {
			t.Errorf("%s does not run %s", c.bundle, pinned)
		}
	}
	chartRef, err := name.NewTag(prefix + "/charts/sparkplug:0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(chartRef, keychain)
	if err != nil {
		t.Fatalf("the chart in the registry: %v", err)
	}
	var manifest v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &manifest); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(read(t, filepath.Join(out, "sparkplug-0.1.0.tgz")))
	if len(manifest.Layers) != 1 || manifest.Layers[0].Digest.Hex != fmt.Sprintf("%x", sum) {
		t.Errorf("the chart's manifest's layers %+v, want the release's chart, sha256 %x", manifest.Layers, sum)
	}

	// The second block: helm install as helm template (no cluster here),
	// and the bundle kubectl would apply.
	words := strings.Fields(strings.ReplaceAll(strings.ReplaceAll(install, docsRegistry, prefix), "\\\n", " "))
	var helmArgs []string
	for i, w := range words {
		if w == "helm" && i+1 < len(words) && words[i+1] == "install" {
			for _, a := range words[i+2:] {
				if a == "#" || a == "kubectl" {
					break
				}
				if a != "--create-namespace" {
					helmArgs = append(helmArgs, strings.Trim(a, "'"))
				}
			}
		}
	}
	if len(helmArgs) < 3 || helmArgs[1] != "oci://"+prefix+"/charts/sparkplug" {
		t.Fatalf("docs/install.md's helm install: %q", helmArgs)
	}
	cmd = exec.Command(helmBin, append(append([]string{"template"}, helmArgs...), "--plain-http")...)
	cmd.Env = env
	rendered, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm template %s: %v\n%s", strings.Join(helmArgs, " "), err, rendered)
	}
	if !bytes.Contains(rendered, []byte(prefix+"/sparkplug:v0.1.0@"+digest)) {
		t.Errorf("the chart from the registry does not run %s/sparkplug:v0.1.0@%s", prefix, digest)
	}
	if !strings.Contains(install, "kubectl apply -n team-a -f bin/release/v0.1.0/sparkplug-v0.1.0-install.yaml") {
		t.Errorf("the second block applies no bundle of the release:\n%s", install)
	}
}

// docsCloneBlocks returns the first two sh blocks of docs/install.md's
// "Install from a clone".
func docsCloneBlocks(t *testing.T) (build, install string) {
	t.Helper()
	doc := string(read(t, filepath.Join("..", "..", "docs", "install.md")))
	start := strings.Index(doc, "\n## Install from a clone\n")
	if start < 0 {
		t.Fatal("docs/install.md has no section Install from a clone")
	}
	doc = doc[start:]
	var blocks []string
	for len(blocks) < 2 {
		i := strings.Index(doc, "\n```sh\n")
		if i < 0 {
			t.Fatalf("docs/install.md's Install from a clone has %d sh blocks, want 2", len(blocks))
		}
		doc = doc[i+len("\n```sh\n"):]
		j := strings.Index(doc, "\n```\n")
		if j < 0 {
			t.Fatal("docs/install.md: a block does not end")
		}
		blocks = append(blocks, doc[:j+1])
		doc = doc[j:]
	}
	if !strings.Contains(blocks[0], "make release ") || !strings.Contains(blocks[0], "make push ") {
		t.Fatalf("docs/install.md's first block is not make release, then make push:\n%s", blocks[0])
	}
	return blocks[0], blocks[1]
}

// copyRepository copies the repository's files (tracked, and new ones
// not ignored) into a directory of its own, as a clone would have them,
// so that make release writes its bin/ there.
func copyRepository(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	cmd := exec.Command("bash", "-c", `git ls-files -z -c -o --exclude-standard | xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh | tar --null -T - -cf - | tar -xf - -C "$1"`, "bash", dst)
	cmd.Dir = filepath.Join("..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("copy the repository: %v\n%s", err, b)
	}
	return dst
}
