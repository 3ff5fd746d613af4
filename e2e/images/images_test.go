//go:build e2e

package images_test

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/images"
)

// Every image builds; the release, pushed as the README says to the local
// registry, is pulled back for linux/amd64 by digest. No cluster.
func TestImages(t *testing.T) {
	ctx := t.Context()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := framework.ToolsBin(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	start := time.Now()
	standin, err := images.SparkStandIn(ctx, root, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Spark stand-in image %s %s in %s", standin.Ref, standin.Digest, time.Since(start).Round(time.Millisecond))
	cfg, files := readTarball(t, standin.Path, standin.Ref)
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/opt/entrypoint.sh"}) || len(cfg.Config.Cmd) != 0 ||
		cfg.Config.User != "185" || cfg.Config.WorkingDir != "/opt/spark/work-dir" || cfg.Architecture != "amd64" {
		t.Errorf("stand-in config %+v, want Spark's layout: ENTRYPOINT /opt/entrypoint.sh, no CMD, USER 185, WORKDIR /opt/spark/work-dir", cfg.Config)
	}
	checkStatic(t, files["opt/entrypoint.sh"])
	if !strings.Contains(string(files["etc/passwd"]), "spark:x:185:") {
		t.Errorf("/etc/passwd names no spark user: %q", files["etc/passwd"])
	}

	start = time.Now()
	argoexec, err := images.Argoexec(filepath.Join(bin, "argoexec"), images.ArgoexecRef("e2e"), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("argoexec image %s %s in %s", argoexec.Ref, argoexec.Digest, time.Since(start).Round(time.Millisecond))
	cfg, files = readTarball(t, argoexec.Path, argoexec.Ref)
	if !slices.Equal(cfg.Config.Entrypoint, []string{"argoexec"}) || !slices.Contains(cfg.Config.Env, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin") {
		t.Errorf("argoexec config %+v, want ENTRYPOINT argoexec found on PATH", cfg.Config)
	}
	checkStatic(t, files["bin/argoexec"])

	host, stop, err := images.StartRegistry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	opts := images.ReleaseOptions{RepoRoot: root, Repository: host + "/sparkplug", Helm: helm(t, root), Dir: dir}
	rel, err := images.BuildRelease(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("release %s built in %s: %s", rel.Version, rel.Took.Round(time.Millisecond), rel.Pinned())
	start = time.Now()
	if again, err := images.BuildRelease(ctx, opts); err != nil || again != rel || time.Since(start) > time.Second {
		t.Errorf("a second BuildRelease built again (%v, %s)", err, time.Since(start))
	}
	for _, f := range []string{rel.ConfigMap, rel.Install} {
		if b, err := os.ReadFile(f); err != nil || !strings.Contains(string(b), rel.Pinned()) {
			t.Errorf("%s does not run %s (%v)", f, rel.Pinned(), err)
		}
	}
	if _, err := os.Stat(rel.Chart); err != nil {
		t.Errorf("no chart: %v", err)
	}

	start = time.Now()
	digest, err := images.PushRelease(ctx, rel, host+"/sparkplug:"+rel.Version)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pushed %s in %s", digest, time.Since(start).Round(time.Millisecond))
	if digest != rel.Digest {
		t.Errorf("pushed %s, the manifests pin %s", digest, rel.Digest)
	}

	// The acknowledger's, as the README's second crane push: the digest
	// controller mode's plugin ConfigMap pins.
	ackDigest, err := images.PushAck(ctx, rel, rel.AckRepository+":"+rel.Version)
	if err != nil {
		t.Fatal(err)
	}
	if ackDigest != rel.AckDigest || ackDigest == rel.Digest {
		t.Errorf("pushed the acknowledger as %s, want %s (not sparkplug's %s)", ackDigest, rel.AckDigest, rel.Digest)
	}
	if acked, err := remote.Head(ref(t, rel.AckRepository+":"+rel.Version)); err != nil || acked.Digest.String() != rel.AckDigest {
		t.Errorf("the acknowledger's tag names %v (%v), want %s", acked, err, rel.AckDigest)
	}

	// What containerd does for the pinned reference on an amd64 node.
	tagged, err := remote.Head(ref(t, host+"/sparkplug:"+rel.Version))
	if err != nil || tagged.Digest.String() != rel.Digest {
		t.Fatalf("the tag names %v (%v), want %s", tagged, err, rel.Digest)
	}
	idx, err := remote.Index(ref(t, host+"/sparkplug@"+rel.Digest))
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(im.Manifests, func(d v1.Descriptor) bool {
		return d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == "amd64"
	})
	if i < 0 || len(im.Manifests) != 2 {
		t.Fatalf("index lists %+v, want linux/amd64 and linux/arm64", im.Manifests)
	}
	img, err := remote.Image(ref(t, host+"/sparkplug@"+im.Manifests[i].Digest.String()))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Architecture != "amd64" || cf.Config.User != "8737:8737" || !slices.Equal(cf.Config.Entrypoint, []string{"/sparkplug"}) {
		t.Errorf("linux/amd64 image: %s, user %q, entrypoint %q", cf.Architecture, cf.Config.User, cf.Config.Entrypoint)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
}

func ref(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// helm builds (cached) and returns the pinned helm, as make release uses.
func helm(t *testing.T, root string) string {
	t.Helper()
	ctx := t.Context()
	script := filepath.Join(root, "hack", "helm.sh")
	if out, err := exec.CommandContext(ctx, "bash", script, "build").CombinedOutput(); err != nil {
		t.Fatalf("hack/helm.sh build: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, "bash", script, "bindir").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "helm")
}

// readTarball reads an image tarball as containerd's import does: the
// image named ref, its config and its files.
func readTarball(t *testing.T, path, ref string) (*v1.ConfigFile, map[string][]byte) {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatalf("%s: no image %s: %v", path, ref, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Uid != 0 || hdr.Gid != 0 {
			t.Errorf("%s is owned by %d:%d, want root", hdr.Name, hdr.Uid, hdr.Gid)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = b
	}
	return cf, files
}

// checkStatic fails unless b is a statically linked amd64 executable: a
// scratch image has no loader.
func checkStatic(t *testing.T, b []byte) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not an ELF binary: %v", err)
	}
	if f.Machine != elf.EM_X86_64 || slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }) {
		t.Errorf("want a static amd64 binary, got %s with an interpreter", f.Machine)
	}
}
