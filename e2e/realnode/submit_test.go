//go:build e2e

package realnode

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/images"
)

// The spark-submit launcher in the released sidecar, as plugin.yaml runs
// it (read-only root filesystem, uid 8737): an image FROM the release with
// a Spark distribution at /opt/spark (the project's fake spark-submit,
// which creates the driver pod through the kubeconfig sparkplug writes),
// and serve --spark-home=/opt/spark in the plugin ConfigMap.
func TestSparkSubmitLauncherInTheReleasedSidecar(t *testing.T) {
	t.Parallel()
	const ns = "realnode-submit"
	ctx := t.Context()
	dir := t.TempDir()
	start := time.Now()
	bin := filepath.Join(dir, "spark-submit")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, ".")
	build.Dir = filepath.Join(env.RepoRoot, "plugin", "submit", "testdata", "fakesubmit")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the fake spark-submit: %v\n%s", err, out)
	}
	ref := pushSparkHomeImage(t, bin)
	t.Logf("image %s built and pushed in %.1fs", ref, time.Since(start).Seconds())

	b, err := os.ReadFile(rel.Install)
	if err != nil {
		t.Fatal(err)
	}
	install := strings.Replace(string(b), rel.Pinned(), ref, 1)
	install = strings.Replace(install, "    - serve\n", "    - serve\n    - --spark-home=/opt/spark\n", 1)
	if install == string(b) || !strings.Contains(install, "--spark-home") {
		t.Fatalf("the release's install bundle has no image %s or serve arg to change", rel.Pinned())
	}
	path := filepath.Join(dir, "install.yaml")
	if err := os.WriteFile(path, []byte(install), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := env.InstallRelease(ctx, ns, path, rel.Chart); err != nil {
		t.Fatal(err)
	}
	// spark-submit applies its ConfigMap and Service server-side (Spark 4,
	// which the fake plays): the spark-submit/ Component's Role.
	rbac, err := os.ReadFile(filepath.Join(env.RepoRoot, "manifests", "spark-submit", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Cluster.Apply(ctx, bytes.ReplaceAll(rbac, []byte("metadata:\n"), []byte("metadata:\n  namespace: "+ns+"\n"))); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	w := submit(t, env.Given(t).Namespace(ns).
		Workflow(workflow("submit", "main", "    - name: main\n"+sparkBody(images.SparkStandInRef, 1, `"--min-executors=1"`, "",
			"          sparkplug: {launcher: spark-submit}\n")))).
		WaitForWorkflow(framework.ToBeSucceeded, wfTimeout)
	t.Logf("workflow Succeeded in %.1fs", time.Since(start).Seconds())
	w.Then().ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
		if n.Phase != wfv1.NodeSucceeded || !appIDPattern.MatchString(param(*n, "application-id")) {
			t.Errorf("node %s %q, outputs %+v", n.Phase, n.Message, n.Outputs)
		}
	})
}

// pushSparkHomeImage pushes the release's linux/amd64 image plus a layer
// holding /opt/spark/bin/spark-submit (bin) and its fake.json (create the
// driver pod) to the registry, and returns its reference by digest.
func pushSparkHomeImage(t *testing.T, bin string) string {
	t.Helper()
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"opt/", 0o755, nil}, {"opt/spark/", 0o755, nil}, {"opt/spark/bin/", 0o755, nil},
		{"opt/spark/bin/spark-submit", 0o755, exe}, {"opt/spark/fake.json", 0o644, []byte(`{"create":true}`)}} {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
		if strings.HasSuffix(f.name, "/") {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	base, err := remote.Image(mustRef(t, rel.Repository+"@"+rel.Digest), remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "amd64"}))
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		t.Fatal(err)
	}
	tag := registry + "/sparkplug-spark:" + rel.Version
	if err := remote.Write(mustRef(t, tag), img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return tag + "@" + d.String()
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
