// Command image builds sparkplug's container image without a Docker daemon,
// as an image tarball (the `docker save` format, which docker load,
// crane push, skopeo docker-archive: and kind load image-archive read).
//
//	go run ./hack/image -binary bin/linux-amd64/sparkplug -out bin/sparkplug-image.tar \
//	    -ref ghcr.io/sparkplug-io/sparkplug:v0.1.0 -version v0.1.0
//
// With -index it builds one image per architecture and writes them as one
// multi-platform OCI image index, in an OCI layout tar file
// (skopeo's oci-archive:, crane, podman and docker load read it):
//
//	go run ./hack/image -index -binary amd64=bin/linux-amd64/sparkplug,arm64=bin/linux-arm64/sparkplug \
//	    -out sparkplug-image.oci.tar -ref ghcr.io/sparkplug-io/sparkplug:v0.1.0 -version v0.1.0 -digest-file digest
//
// `make image` runs it for one architecture, `make release` with -index.
// -product sparkplug-ack packages the acknowledger (cmd/sparkplug-ack)
// instead: the same kind of image, its binary at /sparkplug-ack and no
// command; `make ack-image` and `make release` build it.
// The sparkplug image is the one the Dockerfile describes: a
// single layer holding the static binary at /sparkplug (root-owned, 0755)
// and nothing else (no shell, no /etc/passwd: the user is numeric), run as
// 8737:8737, `ENTRYPOINT ["/sparkplug"]`, `CMD ["serve"]`. Timestamps are
// fixed, so the same binary always gives the same image digest.
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// product is what an image packages: the binary, where it lives (its
// entrypoint), its command and its labels.
type product struct {
	binaryPath         string
	cmd                []string
	title, description string
}

// products are the images sparkplug ships, by -product.
var products = map[string]product{
	"sparkplug": {binaryPath: "/sparkplug", cmd: []string{"serve"}, title: "sparkplug",
		description: "Argo Workflows executor plugin that runs Apache Spark applications"},
	// The acknowledger takes no command: it does one thing.
	"sparkplug-ack": {binaryPath: "/sparkplug-ack", title: "sparkplug-ack",
		description: "sparkplug's acknowledger: the agent pod's part in controller mode, which answers the Argo agent without a Kubernetes client"},
}

const (
	// user is numeric, as the image has no /etc/passwd. 8737 is the uid
	// Argo's agent writes the plugin token as (see plugin.yaml); the group
	// keeps the process out of the root group.
	user       = "8737:8737"
	workingDir = "/"
	sourceURL  = "https://github.com/sparkplug-io/sparkplug"
	// license is the SPDX expression of LICENSE, both images'.
	license = "Apache-2.0"
)

var (
	// epoch stamps the layer's file and the image config: a fixed time
	// makes the build reproducible.
	epoch = time.Unix(0, 0).UTC()
	// elfMachines are the architectures the image may declare.
	elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

type options struct {
	binary, out, ref, version, arch, digestFile, product string
	index                                                bool
}

func run(args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.binary, "binary", "bin/linux-amd64/sparkplug", "the static linux binary to package")
	fs.StringVar(&o.out, "out", "bin/sparkplug-image.tar", "the image tarball to write")
	fs.StringVar(&o.ref, "ref", "ghcr.io/sparkplug-io/sparkplug:dev", "the image reference recorded in the tarball")
	fs.StringVar(&o.version, "version", "dev", "the org.opencontainers.image.version label")
	fs.StringVar(&o.arch, "arch", "amd64", "the image architecture: amd64 or arm64")
	fs.BoolVar(&o.index, "index", false, "write a multi-platform OCI image index (OCI layout tar); -binary is then ARCH=PATH,...")
	fs.StringVar(&o.digestFile, "digest-file", "", "also write the digest (of the index with -index) to this file")
	fs.StringVar(&o.product, "product", "sparkplug", "what the binary is: sparkplug or sparkplug-ack (the acknowledger)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	ref, err := name.NewTag(o.ref)
	if err != nil {
		return fmt.Errorf("-ref: %w", err)
	}
	p, ok := products[o.product]
	if !ok {
		return fmt.Errorf("-product %q: want sparkplug or sparkplug-ack", o.product)
	}
	if o.index {
		return runIndex(p, o, ref, stdout)
	}
	if err := checkBinary(o.binary, o.arch); err != nil {
		return err
	}
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		return fmt.Errorf("read binary: %w", err)
	}
	img, err := buildImage(p, bin, o.version, o.arch)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(o.out, ref, img); err != nil {
		return fmt.Errorf("write %s: %w", o.out, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("image digest: %w", err)
	}
	size, err := imageSize(img)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s %s (compressed layers %d bytes)\n", o.out, ref, digest, size)
	return writeDigest(o.digestFile, digest)
}

// runIndex is run with -index.
func runIndex(p product, o options, ref name.Tag, stdout io.Writer) error {
	bins := map[string][]byte{}
	for _, pair := range strings.Split(o.binary, ",") {
		arch, path, ok := strings.Cut(pair, "=")
		if !ok {
			return fmt.Errorf("-binary %q: want ARCH=PATH,... with -index", o.binary)
		}
		if err := checkBinary(path, arch); err != nil {
			return err
		}
		bin, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read binary: %w", err)
		}
		bins[arch] = bin
	}
	idx, err := buildIndex(p, bins, o.version)
	if err != nil {
		return err
	}
	if err := writeOCIArchive(o.out, ref, idx); err != nil {
		return fmt.Errorf("write %s: %w", o.out, err)
	}
	digest, err := idx.Digest()
	if err != nil {
		return fmt.Errorf("index digest: %w", err)
	}
	fmt.Fprintf(stdout, "%s: %s %s (%d platforms)\n", o.out, ref, digest, len(bins))
	return writeDigest(o.digestFile, digest)
}

// writeDigest writes digest to path, unless path is empty.
func writeDigest(path string, digest v1.Hash) error {
	if path == "" {
		return nil
	}
	if err := os.WriteFile(path, []byte(digest.String()+"\n"), 0o644); err != nil {
		return fmt.Errorf("write digest: %w", err)
	}
	return nil
}

// buildImage returns the image of product p holding bin at p.binaryPath.
func buildImage(p product, bin []byte, version, arch string) (v1.Image, error) {
	if _, ok := elfMachines[arch]; !ok {
		return nil, fmt.Errorf("unsupported architecture %q", arch)
	}
	layerTar, err := singleFileTar(p.binaryPath, bin)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Created:      v1.Time{Time: epoch},
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			Entrypoint: []string{p.binaryPath},
			Cmd:        p.cmd,
			User:       user,
			WorkingDir: workingDir,
			Labels: map[string]string{
				"org.opencontainers.image.source":      sourceURL,
				"org.opencontainers.image.version":     version,
				"org.opencontainers.image.title":       p.title,
				"org.opencontainers.image.description": p.description,
				"org.opencontainers.image.licenses":    license,
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: epoch},
			CreatedBy: "hack/image: COPY " + p.title + " " + p.binaryPath,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	return img, nil
}

// singleFileTar is a layer holding one root-owned executable at path.
func singleFileTar(path string, content []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     path[1:], // layer paths are relative to /
		Mode:     0o755,
		Size:     int64(len(content)),
		ModTime:  epoch,
		Format:   tar.FormatPAX,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if _, err := tw.Write(content); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

// checkBinary refuses what would not start in the image: anything but a
// statically linked linux ELF executable for arch (a scratch image has no
// dynamic loader and no libc).
func checkBinary(path, arch string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s is not an ELF binary (build it with GOOS=linux): %w", path, err)
	}
	defer f.Close()
	want, ok := elfMachines[arch]
	if !ok {
		return fmt.Errorf("unsupported architecture %q", arch)
	}
	if f.Machine != want {
		return fmt.Errorf("%s is built for %s, the image is %s (%s)", path, f.Machine, arch, want)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("%s is not an executable (%s)", path, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (build it with CGO_ENABLED=0)", path)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(libs) > 0 {
		return fmt.Errorf("%s needs shared libraries %q (build it with CGO_ENABLED=0)", path, libs)
	}
	return nil
}

// imageSize is the sum of the compressed layers: what a node pulls.
func imageSize(img v1.Image) (int64, error) {
	layers, err := img.Layers()
	if err != nil {
		return 0, fmt.Errorf("layers: %w", err)
	}
	var total int64
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			return 0, fmt.Errorf("layer size: %w", err)
		}
		total += n
	}
	return total, nil
}
