//go:build e2e

package images

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ReleaseVersion is the version the e2e tests release sparkplug as (a
// VERSION hack/release.sh accepts).
const ReleaseVersion = "v0.0.0-e2e"

// ReleaseOptions say what to build and with which tools.
type ReleaseOptions struct {
	RepoRoot   string // the repository to release
	Repository string // IMAGE: the image repository the manifests and chart name, e.g. 127.0.0.1:PORT/sparkplug
	Version    string // VERSION, default ReleaseVersion
	Helm       string // HELM: hack/helm.sh's helm; empty builds no chart
	Dir        string // where the release goes; it must outlive every user of the Release
}

// Release is a built release of sparkplug: hack/release.sh's output.
type Release struct {
	Version    string
	Repository string
	// Dir holds every file of the release (make release's bin/release/VERSION).
	Dir string
	// Archive is sparkplug-VERSION-image.oci.tar: an OCI layout tar of one
	// image index (linux/amd64, linux/arm64).
	Archive string
	// Digest is the index's digest, the one the manifests pin.
	Digest string
	// AckArchive and AckDigest are the acknowledger's image index
	// (sparkplug-ack-VERSION-image.oci.tar, cmd/sparkplug-ack), which
	// controller mode's plugin ConfigMap runs as AckRepository
	// (Repository-ack, hack/release.sh's default):VERSION@AckDigest.
	AckArchive, AckDigest, AckRepository string
	// Install, ConfigMap and Chart are the install bundle, the plugin
	// ConfigMap and the Helm chart (empty without Helm).
	Install, ConfigMap, Chart string
	// Took is how long the build took.
	Took time.Duration
}

// Pinned is the reference the release's manifests run: REPOSITORY:VERSION@DIGEST.
func (r *Release) Pinned() string { return r.Repository + ":" + r.Version + "@" + r.Digest }

// AckPinned is the acknowledger's reference in the release's controller
// mode: REPOSITORY-ack:VERSION@DIGEST.
func (r *Release) AckPinned() string { return r.AckRepository + ":" + r.Version + "@" + r.AckDigest }

// releases memoizes BuildRelease in this process: a release takes a
// while (two cross-compilations, kustomize, helm) and does not change
// during a test run.
var releases = struct {
	sync.Mutex
	built map[string]*Release
}{built: map[string]*Release{}}

// BuildRelease builds sparkplug's release as `make release` does (it runs
// hack/release.sh with HELM and IMAGE), or returns the one this
// process already built for the same repository and version.
func BuildRelease(ctx context.Context, o ReleaseOptions) (*Release, error) {
	if o.Version == "" {
		o.Version = ReleaseVersion
	}
	key := o.Repository + ":" + o.Version
	releases.Lock()
	defer releases.Unlock()
	if r, ok := releases.built[key]; ok {
		return r, nil
	}
	start := time.Now()
	out := filepath.Join(o.Dir, "release-"+o.Version)
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(o.RepoRoot, "hack", "release.sh"), o.Version, out)
	cmd.Dir = o.RepoRoot
	cmd.Env = append(os.Environ(), "HELM="+o.Helm, "IMAGE="+o.Repository)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("hack/release.sh %s: %w\n%s", o.Version, err, b)
	}
	r := &Release{
		Version: o.Version, Repository: o.Repository, Dir: out,
		Archive:       filepath.Join(out, "sparkplug-"+o.Version+"-image.oci.tar"),
		AckArchive:    filepath.Join(out, "sparkplug-ack-"+o.Version+"-image.oci.tar"),
		AckRepository: o.Repository + "-ack",
		Install:       filepath.Join(out, "sparkplug-"+o.Version+"-install.yaml"),
		ConfigMap:     filepath.Join(out, "spark-executor-plugin-configmap.yaml"),
		Took:          time.Since(start),
	}
	if o.Helm != "" {
		r.Chart = filepath.Join(out, "sparkplug-"+o.Version[1:]+".tgz")
	}
	idx, err := unpack(ctx, r.Archive, filepath.Join(o.Dir, "release-"+o.Version+"-layout"))
	if err != nil {
		return nil, err
	}
	d, err := idx.Digest()
	if err != nil {
		return nil, err
	}
	r.Digest = d.String()
	ack, err := unpack(ctx, r.AckArchive, filepath.Join(o.Dir, "release-"+o.Version+"-ack-layout"))
	if err != nil {
		return nil, err
	}
	if d, err = ack.Digest(); err != nil {
		return nil, err
	}
	r.AckDigest = d.String()
	releases.built[key] = r
	return r, nil
}

// PushRelease pushes the release's image to ref (REPOSITORY:TAG) as the
// README's release step does:
//
//	mkdir img && tar -xf sparkplug-VERSION-image.oci.tar -C img && crane push img REPOSITORY:TAG
//
// with tar, then what `crane push` does with a directory, in Go: it reads
// the directory as an OCI layout and, as its index.json lists one image
// index, pushes that index (remote.WriteIndex, with every platform's
// image). It returns the pushed index's digest. A registry on 127.0.0.1 is
// spoken to over plain HTTP, as crane does.
func PushRelease(ctx context.Context, r *Release, ref string) (string, error) {
	return pushArchive(ctx, r, r.Archive, ref)
}

// PushAck pushes the acknowledger's image to ref (REPOSITORY-ack:TAG) as
// PushRelease does sparkplug's, the README's second crane push.
func PushAck(ctx context.Context, r *Release, ref string) (string, error) {
	return pushArchive(ctx, r, r.AckArchive, ref)
}

func pushArchive(ctx context.Context, r *Release, archive, ref string) (string, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(r.Dir), "img-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	idx, err := unpack(ctx, archive, dir)
	if err != nil {
		return "", err
	}
	if err := remote.WriteIndex(tag, idx, remote.WithContext(ctx)); err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

// unpack extracts an OCI layout tar into dir (tar -xf ARCHIVE -C dir) and
// returns its one image index, as crane push takes a layout of one entry.
func unpack(ctx context.Context, archive, dir string) (v1.ImageIndex, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if b, err := exec.CommandContext(ctx, "tar", "-xf", archive, "-C", dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tar -xf %s: %w\n%s", archive, err, b)
	}
	l, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: not an OCI layout: %w", archive, err)
	}
	m, err := l.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 || !m.Manifests[0].MediaType.IsIndex() {
		return nil, fmt.Errorf("%s: index.json lists %d entries, want one image index", archive, len(m.Manifests))
	}
	return l.ImageIndex(m.Manifests[0].Digest)
}
