package node

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// WriteBinaryImage writes to out an image tarball (the `docker save`
// format, which ImportImage reads) of ref: one layer holding the static
// binary bin at /<its name>, which is the entrypoint, with args as CMD.
// Timestamps are fixed: the same binary gives the same image.
func WriteBinaryImage(out, ref, bin string, args ...string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("read %s: %w", bin, err)
	}
	target := "/" + path.Base(bin)
	layer, err := binaryLayer(target, b)
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return fmt.Errorf("image %s: %w", ref, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("image %s: %w", ref, err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cfg.Config.Entrypoint = []string{target}
	cfg.Config.Cmd = args
	cfg.Config.WorkingDir = "/"
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return fmt.Errorf("image %s: %w", ref, err)
	}
	if err := tarball.WriteToFile(out, tag, img); err != nil {
		return fmt.Errorf("write image %s to %s: %w", ref, out, err)
	}
	return nil
}

// binaryLayer is a layer holding one executable file.
func binaryLayer(target string, content []byte) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Name: target[1:], Mode: 0o755, Size: int64(len(content)),
		Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0).UTC(), Format: tar.FormatPAX,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("layer of %s: %w", target, err)
	}
	if _, err := tw.Write(content); err != nil {
		return nil, fmt.Errorf("layer of %s: %w", target, err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer of %s: %w", target, err)
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("layer of %s: %w", target, err)
	}
	return layer, nil
}
