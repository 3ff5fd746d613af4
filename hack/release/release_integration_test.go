//go:build integration

package release

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const (
	version = "v0.0.0-test.1"
	image   = "ghcr.io/sparkplug-io/sparkplug"
)

// TestMain removes the release the tests share.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// shared is the release the tests build once, as `make release` builds it.
var shared struct {
	once      sync.Once
	dir, helm string
	err       error
}

// buildRelease runs hack/release.sh once for all tests: the release's
// directory and the helm it packaged the chart with.
func buildRelease(t *testing.T) (out, helm string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	helm = buildHelm(t, root)
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "sparkplug-release-"); shared.err != nil {
			return
		}
		shared.helm = helm
		cmd := exec.Command("bash", "hack/release.sh", version, filepath.Join(shared.dir, "out"))
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "HELM="+helm)
		if b, err := cmd.CombinedOutput(); err != nil {
			shared.err = fmt.Errorf("hack/release.sh: %w\n%s", err, b)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return filepath.Join(shared.dir, "out"), shared.helm
}

// A release built as `make release` builds it: the image index holds
// linux/amd64 and linux/arm64 (and so does the acknowledger's), and the plugin ConfigMap, the install
// bundle, the kustomize base and the packaged chart all run that index (and in
// controller mode the acknowledger's index, in its ConfigMap, bundle, base and chart),
// pinned by its digest, and so do the chart's Artifact Hub images; the SBOM
// names sparkplug's direct dependencies; SHA256SUMS checks every file.
func TestReleaseIsOneIndexPinnedEverywhere(t *testing.T) {
	out, helm := buildRelease(t)

	digest, platforms := indexOf(t, filepath.Join(out, "sparkplug-"+version+"-image.oci.tar"))
	if strings.Join(platforms, ",") != "linux/amd64,linux/arm64" {
		t.Errorf("index platforms %v, want linux/amd64 and linux/arm64", platforms)
	}
	pinned := image + ":" + version + "@" + digest
	// The acknowledger's index, for the same platforms.
	ackDigest, platforms := indexOf(t, filepath.Join(out, "sparkplug-ack-"+version+"-image.oci.tar"))
	if strings.Join(platforms, ",") != "linux/amd64,linux/arm64" {
		t.Errorf("acknowledger index platforms %v, want linux/amd64 and linux/arm64", platforms)
	}
	ackPinned := image + "-ack:" + version + "@" + ackDigest

	if got := sidecarImage(t, read(t, filepath.Join(out, "spark-executor-plugin-configmap.yaml"))); got != pinned {
		t.Errorf("plugin ConfigMap runs %q, want %q", got, pinned)
	}
	if install := read(t, filepath.Join(out, "sparkplug-"+version+"-install.yaml")); !strings.Contains(string(install), pinned) ||
		!strings.Contains(string(install), "kind: Role") {
		t.Errorf("install bundle lacks the pinned image or the Role")
	}
	base := untar(t, filepath.Join(out, "sparkplug-"+version+"-kustomize.tar.gz"))
	if got := sidecarImage(t, base["manifests/spark-executor-plugin-configmap.yaml"]); got != pinned {
		t.Errorf("kustomize base runs %q, want %q", got, pinned)
	}
	if _, ok := base["manifests/kustomization.yaml"]; !ok {
		t.Error("kustomize base has no kustomization.yaml")
	}
	// The optional monitor runs the same index; its monitoring is there.
	if got := deploymentImage(t, base["manifests/monitor/deployment.yaml"]); got != pinned {
		t.Errorf("kustomize base's monitor runs %q, want %q", got, pinned)
	}
	// Controller mode: the acknowledger and the controller, each pinned,
	// in the base and in its bundle.
	if got := sidecarImage(t, base["manifests/modes/controller/spark-executor-plugin-configmap.yaml"]); got != ackPinned {
		t.Errorf("kustomize base's controller mode plugin runs %q, want %q", got, ackPinned)
	}
	if got := deploymentImage(t, base["manifests/modes/controller/deployment.yaml"]); got != pinned {
		t.Errorf("kustomize base's controller runs %q, want %q", got, pinned)
	}
	bundle := docs(read(t, filepath.Join(out, "sparkplug-"+version+"-controller-install.yaml")))
	if got := sidecarImage(t, bundle["ConfigMap"]); got != ackPinned {
		t.Errorf("controller mode bundle's plugin runs %q, want %q", got, ackPinned)
	}
	if got := deploymentImage(t, bundle["Deployment"]); got != pinned {
		t.Errorf("controller mode bundle's controller runs %q, want %q", got, pinned)
	}
	for _, f := range []string{"manifests/monitor/kustomization.yaml", "manifests/monitoring/kustomization.yaml",
		"manifests/monitoring/prometheusrule.yaml", "manifests/monitoring/grafana-dashboard.json"} {
		if _, ok := base[f]; !ok {
			t.Errorf("kustomize base has no %s", f)
		}
	}

	chart := filepath.Join(out, "sparkplug-"+strings.TrimPrefix(version, "v")+".tgz")
	rendered, err := exec.Command(helm, "template", "sparkplug", chart, "--namespace", "spark-jobs").Output()
	if err != nil {
		t.Fatalf("helm template of the packaged chart: %v", err)
	}
	if !strings.Contains(string(rendered), "@"+digest) {
		t.Errorf("the packaged chart does not run the index %s", digest)
	}
	rendered, err = exec.Command(helm, "template", "sparkplug", chart, "--namespace", "spark-jobs",
		"--set", "monitor.enabled=true", "--show-only", "templates/monitor.yaml").Output()
	if err != nil {
		t.Fatalf("helm template of the packaged chart's monitor: %v", err)
	}
	var monitor []byte
	for _, doc := range strings.Split(string(rendered), "\n---\n") {
		if strings.Contains(doc, "\nkind: Deployment\n") {
			monitor = []byte(doc)
		}
	}
	if got := deploymentImage(t, monitor); got != pinned {
		t.Errorf("the packaged chart's monitor runs %q, want %q", got, pinned)
	}
	rendered, err = exec.Command(helm, "template", "sparkplug", chart, "--namespace", "spark-jobs", "--set", "mode=controller").Output()
	if err != nil {
		t.Fatalf("helm template of the packaged chart in controller mode: %v", err)
	}
	controller := docs(rendered)
	if got := sidecarImage(t, controller["ConfigMap"]); got != ackPinned {
		t.Errorf("the packaged chart's acknowledger is %q, want %q", got, ackPinned)
	}
	if got := deploymentImage(t, controller["Deployment"]); got != pinned {
		t.Errorf("the packaged chart's controller runs %q, want %q", got, pinned)
	}

	// The Artifact Hub images of the packaged chart: both indexes, pinned.
	shown, err := exec.Command(helm, "show", "chart", chart).Output()
	if err != nil {
		t.Fatalf("helm show chart: %v", err)
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(shown, &meta); err != nil {
		t.Fatal(err)
	}
	var images []map[string]string
	if err := yaml.Unmarshal([]byte(meta.Annotations["artifacthub.io/images"]), &images); err != nil {
		t.Fatal(err)
	}
	if want := []map[string]string{{"name": "sparkplug", "image": pinned}, {"name": "sparkplug-ack", "image": ackPinned}}; !reflect.DeepEqual(images, want) {
		t.Errorf("the packaged chart's artifacthub.io/images %v, want %v", images, want)
	}
	if p := meta.Annotations["artifacthub.io/prerelease"]; p != "true" {
		t.Errorf("artifacthub.io/prerelease %q for %s, want true", p, version)
	}

	checkSBOM(t, filepath.Join(out, "sparkplug-"+version+".spdx.json"))

	sums := read(t, filepath.Join(out, "SHA256SUMS"))
	listed := map[string]bool{}
	files := 0
	sc := bufio.NewScanner(strings.NewReader(string(sums)))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", sc.Text())
		}
		h := sha256.Sum256(read(t, filepath.Join(out, name)))
		if hex.EncodeToString(h[:]) != sum {
			t.Errorf("SHA256SUMS: %s does not match", name)
		}
		listed[name] = true
		files++
	}
	if entries, _ := os.ReadDir(out); files != len(entries)-1 || files != 8 {
		t.Errorf("SHA256SUMS lists %d files; the release has %d besides it, want 8", files, len(entries)-1)
	}
	if !listed["sparkplug-"+version+".spdx.json"] {
		t.Error("SHA256SUMS does not list the SBOM")
	}
}

// checkSBOM: the release's SBOM is SPDX 2.3 and describes sparkplug at
// the release's version, which DEPENDS_ON its direct dependencies at the
// versions go.mod requires.
func checkSBOM(t *testing.T, path string) {
	t.Helper()
	var doc struct {
		SPDXVersion string `json:"spdxVersion"`
		Packages    []struct {
			Name, SPDXID, VersionInfo, SourceInfo string
			ExternalRefs                          []struct{ ReferenceType, ReferenceLocator string }
		}
		Relationships []struct{ SpdxElementID, RelationshipType, RelatedSpdxElement string }
	}
	if err := json.Unmarshal(read(t, path), &doc); err != nil {
		t.Fatalf("the SBOM: %v", err)
	}
	if doc.SPDXVersion != "SPDX-2.3" || len(doc.Packages) < 10 {
		t.Fatalf("the SBOM: %s, %d packages", doc.SPDXVersion, len(doc.Packages))
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	purls := map[string]string{}
	for _, p := range doc.Packages {
		if p.Name == "sparkplug" && !strings.HasSuffix(p.SourceInfo, " at revision "+strings.TrimSpace(string(head))) {
			t.Errorf("the SBOM's sparkplug: sourceInfo %q, want the commit %s", p.SourceInfo, head)
		}
		ids[p.Name] = p.SPDXID
		for _, r := range p.ExternalRefs {
			if r.ReferenceType == "purl" {
				purls[p.Name] = r.ReferenceLocator
			}
		}
	}
	main := ids["sparkplug"]
	if purls["sparkplug"] != "pkg:golang/github.com/sparkplug-io/sparkplug@"+version {
		t.Errorf("the SBOM's sparkplug: %q", purls["sparkplug"])
	}
	dependsOn := map[string]bool{}
	described := false
	for _, r := range doc.Relationships {
		switch {
		case r.SpdxElementID == "SPDXRef-DOCUMENT" && r.RelationshipType == "DESCRIBES" && r.RelatedSpdxElement == main:
			described = true
		case r.SpdxElementID == main && r.RelationshipType == "DEPENDS_ON":
			dependsOn[r.RelatedSpdxElement] = true
		}
	}
	if !described {
		t.Error("the SBOM DESCRIBES no sparkplug")
	}
	for _, mod := range []string{"github.com/argoproj/argo-workflows/v3", "k8s.io/client-go", "github.com/gin-gonic/gin"} {
		v, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", mod).Output()
		if err != nil {
			t.Fatalf("go list -m %s: %v", mod, err)
		}
		want := "pkg:golang/" + mod + "@" + strings.TrimSpace(string(v))
		if purls[mod] != want || !dependsOn[ids[mod]] {
			t.Errorf("the SBOM's %s: purl %q, want %q; sparkplug DEPENDS_ON it: %v", mod, purls[mod], want, dependsOn[ids[mod]])
		}
	}
}

// docs splits rendered YAML into its documents by kind, for kinds that
// occur once (the last one otherwise).
func docs(rendered []byte) map[string][]byte {
	m := map[string][]byte{}
	for _, doc := range strings.Split(string(rendered), "\n---\n") {
		var o struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &o); err == nil && o.Kind != "" {
			m[o.Kind] = []byte(doc)
		}
	}
	return m
}

// buildHelm builds (or finds cached) the helm of hack/helm.sh.
func buildHelm(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("bash", "hack/helm.sh", "build")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/helm.sh build: %v\n%s", err, b)
	}
	dir, err := exec.Command("bash", filepath.Join(root, "hack/helm.sh"), "bindir").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(strings.TrimSpace(string(dir)), "helm")
}

// indexOf reads an OCI layout tar: the digest of its one image index and
// the platforms that index lists.
func indexOf(t *testing.T, path string) (string, []string) {
	t.Helper()
	files := untar(t, path)
	var outer struct {
		Manifests []struct {
			Digest   string `json:"digest"`
			Platform *struct {
				OS           string `json:"os"`
				Architecture string `json:"architecture"`
			} `json:"platform"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &outer); err != nil || len(outer.Manifests) != 1 {
		t.Fatalf("index.json: %v, %d entries, want 1", err, len(outer.Manifests))
	}
	digest := outer.Manifests[0].Digest
	inner := outer
	if err := json.Unmarshal(files["blobs/sha256/"+strings.TrimPrefix(digest, "sha256:")], &inner); err != nil {
		t.Fatalf("the index blob: %v", err)
	}
	var platforms []string
	for _, m := range inner.Manifests {
		if m.Platform != nil {
			platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
		}
	}
	return digest, platforms
}

// sidecarImage is the image of a plugin ConfigMap's sidecar container.
func sidecarImage(t *testing.T, configMap []byte) string {
	t.Helper()
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(configMap, &cm); err != nil {
		t.Fatal(err)
	}
	var c corev1.Container
	if err := yaml.Unmarshal([]byte(cm.Data["sidecar.container"]), &c); err != nil {
		t.Fatal(err)
	}
	return c.Image
}

// deploymentImage is the image of a Deployment's only container.
func deploymentImage(t *testing.T, deployment []byte) string {
	t.Helper()
	var d appsv1.Deployment
	if err := yaml.Unmarshal(deployment, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("Deployment %q has %d containers, want 1", d.Name, len(d.Spec.Template.Spec.Containers))
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// untar reads a tar file, gzipped or not, into memory by name.
func untar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	out := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out[strings.TrimPrefix(hdr.Name, "./")] = b
		}
	}
}
