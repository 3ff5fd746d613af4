package main

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// platformsInOrder are the architectures of a release's image index.
var platformsInOrder = []string{"amd64", "arm64"}

// buildIndex is the multi-platform image of product p's binaries by
// architecture: one image each (buildImage), in an OCI image index that
// names their platforms.
func buildIndex(p product, bins map[string][]byte, version string) (v1.ImageIndex, error) {
	var idx v1.ImageIndex = empty.Index
	idx = mutate.IndexMediaType(idx, types.OCIImageIndex)
	for _, arch := range platformsInOrder {
		bin, ok := bins[arch]
		if !ok {
			continue
		}
		img, err := buildImage(p, bin, version, arch)
		if err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
		})
	}
	for arch := range bins {
		if _, ok := elfMachines[arch]; !ok {
			return nil, fmt.Errorf("unsupported architecture %q", arch)
		}
	}
	return idx, nil
}

// writeOCIArchive writes idx as an OCI image layout in a tar file (an
// "oci-archive", which skopeo, crane, podman and docker load read), its
// one entry named ref. The archive's bytes depend on idx alone.
func writeOCIArchive(path string, ref name.Tag, idx v1.ImageIndex) error {
	dir, err := os.MkdirTemp("", "sparkplug-oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("write OCI layout: %w", err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref.TagStr(),
		"io.containerd.image.name":          ref.Name(),
	})); err != nil {
		return fmt.Errorf("write OCI layout: %w", err)
	}
	return tarDir(dir, path)
}

// tarDir writes the regular files and directories under dir to a tar
// file at path, in name order, with fixed times and owners.
func tarDir(dir, path string) error {
	var names []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			names = append(names, p)
		}
		return nil
	}); err != nil {
		return err
	}
	sort.Strings(names)
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(out)
	for _, p := range names {
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		hdr := &tar.Header{Name: rel, ModTime: epoch, Format: tar.FormatPAX, Mode: 0o644, Typeflag: tar.TypeReg, Size: info.Size()}
		if info.IsDir() {
			hdr.Name, hdr.Mode, hdr.Typeflag, hdr.Size = rel+"/", 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.IsDir() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			if err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return out.Close()
}
