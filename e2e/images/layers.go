//go:build e2e

package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Image is an image tarball on disk.
type Image struct {
	// Ref is the name recorded in the tarball: what containerd calls the
	// image once imported, and what pods name.
	Ref string
	// Path is the tarball, in the `docker save` format.
	Path string
	// Digest is the image manifest's digest.
	Digest string
	// Config is the image's configuration (entrypoint, user, env).
	Config v1.Config
}

// entry is one file, directory or symlink of a layer, root-owned.
type entry struct {
	name string // without the leading slash
	mode int64
	dir  bool
	data []byte
}

// epoch stamps files and configs: the same inputs give the same digest.
var epoch = time.Unix(0, 0).UTC()

// layer is a layer holding entries, in order (parents first).
func layer(entries []entry) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: e.mode, ModTime: epoch, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(e.data))}
		if e.dir {
			hdr.Name, hdr.Typeflag, hdr.Size = e.name+"/", tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}

// writeImage builds a linux/amd64 image of one layer with cfg and writes
// it as a tarball named ref at path.
func writeImage(path, ref string, cfg v1.Config, entries []entry, createdBy string) (Image, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return Image{}, fmt.Errorf("image name %q: %w", ref, err)
	}
	l, err := layer(entries)
	if err != nil {
		return Image{}, fmt.Errorf("layer of %s: %w", ref, err)
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: "amd64", OS: "linux", Created: v1.Time{Time: epoch},
		RootFS: v1.RootFS{Type: "layers"}, Config: cfg,
	})
	if err != nil {
		return Image{}, err
	}
	img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: createdBy}})
	if err != nil {
		return Image{}, err
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return Image{}, fmt.Errorf("write %s: %w", path, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return Image{}, err
	}
	return Image{Ref: tag.Name(), Path: path, Digest: digest.String(), Config: cfg}, nil
}

// etcFiles are a minimal /etc for a static binary: users by name (os/user
// reads /etc/passwd), and hosts before DNS.
func etcFiles(passwd, group string) []entry {
	return []entry{
		{name: "etc", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "tmp", mode: 0o1777, dir: true},
	}
}

// pathEnv is the PATH of distroless and Debian images.
const pathEnv = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
