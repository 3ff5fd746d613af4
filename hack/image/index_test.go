package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// writeIndex builds an index of fakeBinary for both platforms and writes
// it as make release does; it returns the archive's path.
func writeIndex(t *testing.T, dir string) string {
	t.Helper()
	idx, err := buildIndex(products["sparkplug"], map[string][]byte{"amd64": fakeBinary, "arm64": fakeBinary}, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag("ghcr.io/sparkplug-io/sparkplug:v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "image.oci.tar")
	if err := writeOCIArchive(path, ref, idx); err != nil {
		t.Fatal(err)
	}
	return path
}

// The archive, unpacked, is an OCI layout whose one entry is an index of
// a linux/amd64 and a linux/arm64 image, each valid and of its own
// architecture, named by the release's tag.
func TestIndexHoldsBothPlatforms(t *testing.T) {
	dir := t.TempDir()
	unpack(t, writeIndex(t, dir), filepath.Join(dir, "layout"))
	p, err := layout.FromPath(filepath.Join(dir, "layout"))
	if err != nil {
		t.Fatal(err)
	}
	outer, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	om, err := outer.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(om.Manifests) != 1 || om.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v1.2.3" ||
		om.Manifests[0].Annotations["io.containerd.image.name"] != "ghcr.io/sparkplug-io/sparkplug:v1.2.3" {
		t.Fatalf("index.json lists %+v, want the release's index, named by its tag", om.Manifests)
	}
	idx, err := outer.ImageIndex(om.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(idx); err != nil {
		t.Errorf("invalid index: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, m := range im.Manifests {
		img, err := idx.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if m.Platform == nil || m.Platform.OS != "linux" || m.Platform.Architecture != cf.Architecture {
			t.Errorf("manifest %s: platform %+v, image config %s/%s", m.Digest, m.Platform, cf.OS, cf.Architecture)
		}
		platforms = append(platforms, cf.OS+"/"+cf.Architecture)
	}
	if len(platforms) != 2 || platforms[0] != "linux/amd64" || platforms[1] != "linux/arm64" {
		t.Errorf("platforms %v, want linux/amd64 and linux/arm64", platforms)
	}
}

// The same binaries give the same archive, byte for byte.
func TestIndexIsReproducible(t *testing.T) {
	a, err := os.ReadFile(writeIndex(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(writeIndex(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two builds of the same binaries differ")
	}
}

func TestIndexRejectsAnUnknownArchitecture(t *testing.T) {
	if _, err := buildIndex(products["sparkplug"], map[string][]byte{"riscv64": fakeBinary}, "v1"); err == nil {
		t.Error("riscv64 accepted")
	}
}

// unpack extracts a tar file into dir.
func unpack(t *testing.T, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
