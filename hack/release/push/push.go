package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/yaml"
)

// Helm's media types for a chart in an OCI registry (helm.sh/helm/v3's
// pkg/registry), which `helm pull` and `helm install oci://...` require.
const (
	helmConfigMediaType types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	helmChartMediaType  types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// imageNameAnnotation is where hack/image records, in the archive's
// index.json, the reference the release's manifests run.
const imageNameAnnotation = "io.containerd.image.name"

// pushIndex pushes the one image index of an OCI layout tar (hack/image
// -index's output) to ref with every platform's image, and returns its
// digest. ref must be the name the archive records: the release's
// manifests pull that repository by the index's digest.
func pushIndex(ctx context.Context, archive string, ref name.Tag, opts ...remote.Option) (v1.Hash, error) {
	dir, err := os.MkdirTemp("", "sparkplug-push-")
	if err != nil {
		return v1.Hash{}, err
	}
	defer os.RemoveAll(dir)
	if err := untar(archive, dir); err != nil {
		return v1.Hash{}, err
	}
	l, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("%s: not an OCI layout: %w", archive, err)
	}
	m, err := l.IndexManifest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("%s: %w", archive, err)
	}
	if len(m.Manifests) != 1 || !m.Manifests[0].MediaType.IsIndex() {
		return v1.Hash{}, fmt.Errorf("%s: index.json lists %d entries, want one image index", archive, len(m.Manifests))
	}
	entry := m.Manifests[0]
	recorded, err := name.NewTag(entry.Annotations[imageNameAnnotation])
	if err != nil {
		return v1.Hash{}, fmt.Errorf("%s: the image name it records, %q: %w", archive, entry.Annotations[imageNameAnnotation], err)
	}
	if recorded.Name() != ref.Name() {
		return v1.Hash{}, fmt.Errorf("%s was released as %s, not %s: its manifests pull that name (make release with REGISTRY=%s, or push with the REGISTRY it was built for)",
			filepath.Base(archive), recorded, ref, ref.Context().RegistryStr()+"/"+path.Dir(ref.Context().RepositoryStr()))
	}
	idx, err := l.ImageIndex(entry.Digest)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("%s: %w", archive, err)
	}
	if err := remote.WriteIndex(ref, idx, append(opts, remote.WithContext(ctx))...); err != nil {
		return v1.Hash{}, fmt.Errorf("push %s: %w", ref, err)
	}
	return entry.Digest, nil
}

// untar extracts an OCI layout tar into dir: its directories and regular
// files only, each inside dir.
func untar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
		if !filepath.IsLocal(h.Name) {
			return fmt.Errorf("%s: entry %q is outside the layout", archive, h.Name)
		}
		target := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			err = writeFile(target, tr)
		default:
			err = fmt.Errorf("entry %q is neither a file nor a directory", h.Name)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
	}
}

func writeFile(target string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	f, err := os.Create(target)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// chartMeta is what push reads of a packaged chart's Chart.yaml.
type chartMeta struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
}

// pushChart pushes a packaged chart (helm package's .tgz) to
// REPO/NAME:VERSION as `helm push FILE oci://REPO` lays it out: a manifest
// whose config is Chart.yaml as JSON, with Helm's config media type, and
// whose one layer is the file, byte for byte. It returns the tag and the
// manifest's digest.
func pushChart(ctx context.Context, file string, repo name.Repository, opts ...remote.Option) (name.Tag, v1.Hash, error) {
	chart, err := os.ReadFile(file)
	if err != nil {
		return name.Tag{}, v1.Hash{}, err
	}
	chartYAML, err := chartFile(chart)
	if err != nil {
		return name.Tag{}, v1.Hash{}, fmt.Errorf("%s: %w", file, err)
	}
	var meta chartMeta
	if err := yaml.Unmarshal(chartYAML, &meta); err != nil {
		return name.Tag{}, v1.Hash{}, fmt.Errorf("%s: Chart.yaml: %w", file, err)
	}
	if meta.Name == "" || meta.Version == "" {
		return name.Tag{}, v1.Hash{}, fmt.Errorf("%s: Chart.yaml names no chart or version", file)
	}
	config, err := yaml.YAMLToJSON(chartYAML)
	if err != nil {
		return name.Tag{}, v1.Hash{}, fmt.Errorf("%s: Chart.yaml: %w", file, err)
	}
	// A tag may not hold "+": Helm writes a version's build metadata with "_".
	tag := repo.Registry.Repo(repo.RepositoryStr(), meta.Name).Tag(strings.ReplaceAll(meta.Version, "+", "_"))
	opts = append(opts, remote.WithContext(ctx))
	layers := []v1.Layer{static.NewLayer(config, helmConfigMediaType), static.NewLayer(chart, helmChartMediaType)}
	descs := make([]v1.Descriptor, len(layers))
	for i, l := range layers {
		if err := remote.WriteLayer(tag.Context(), l, opts...); err != nil {
			return name.Tag{}, v1.Hash{}, fmt.Errorf("push %s: %w", tag, err)
		}
		d, _ := l.Digest() // static layers know theirs
		size, _ := l.Size()
		mt, _ := l.MediaType()
		descs[i] = v1.Descriptor{MediaType: mt, Size: size, Digest: d}
	}
	annotations := map[string]string{
		"org.opencontainers.image.title":   meta.Name,
		"org.opencontainers.image.version": meta.Version,
	}
	if meta.Description != "" {
		annotations["org.opencontainers.image.description"] = meta.Description
	}
	m := manifest{v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1,
		Config: descs[0], Layers: descs[1:], Annotations: annotations}}
	if err := remote.Put(tag, m, opts...); err != nil {
		return name.Tag{}, v1.Hash{}, fmt.Errorf("push %s: %w", tag, err)
	}
	raw, _ := m.RawManifest()
	digest, _, err := v1.SHA256(bytes.NewReader(raw))
	return tag, digest, err
}

// manifest is an image manifest as remote.Put takes it.
type manifest struct{ v1.Manifest }

func (m manifest) RawManifest() ([]byte, error)        { return json.Marshal(m.Manifest) }
func (m manifest) MediaType() (types.MediaType, error) { return m.Manifest.MediaType, nil }

// chartFile returns the Chart.yaml at the top of a packaged chart
// (NAME/Chart.yaml).
func chartFile(tgz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("no Chart.yaml")
		}
		if err != nil {
			return nil, err
		}
		if dir, file := path.Split(h.Name); file == "Chart.yaml" && strings.Count(dir, "/") == 1 {
			return io.ReadAll(tr)
		}
	}
}
