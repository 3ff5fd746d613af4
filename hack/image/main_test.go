package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// fakeBinary stands in for sparkplug: buildImage packages any bytes.
var fakeBinary = []byte("\x7fELF not really a binary\n")

// writeImage builds an image of fakeBinary and writes it as make image does.
func writeImage(t *testing.T, dir string) string {
	t.Helper()
	img, err := buildImage(products["sparkplug"], fakeBinary, "v1.2.3", "amd64")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "image.tar")
	ref, err := name.NewTag("ghcr.io/sparkplug-io/sparkplug:v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if err := tarball.WriteToFile(path, ref, img); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestImage reads the tarball back as a registry client would.
func TestImage(t *testing.T) {
	path := writeImage(t, t.TempDir())
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatalf("read %s back: %v", path, err)
	}
	// Digests, sizes and diff ids agree, as a registry would check.
	if err := validate.Image(img); err != nil {
		t.Errorf("invalid image: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("platform = %s/%s, want linux/amd64", cf.OS, cf.Architecture)
	}
	c := cf.Config
	if diff := cmp.Diff([]string{"/sparkplug"}, c.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"serve"}, c.Cmd); diff != "" {
		t.Errorf("cmd (-want +got):\n%s", diff)
	}
	uid, gid, ok := strings.Cut(c.User, ":")
	if !ok || uid == "0" || gid == "0" || !numeric(uid) || !numeric(gid) {
		t.Errorf("user = %q, want a numeric non-root uid:gid (the image has no /etc/passwd)", c.User)
	}
	if uid != "8737" {
		t.Errorf("uid = %s, want 8737, the owner of Argo's plugin token file", uid)
	}
	if c.WorkingDir != "/" {
		t.Errorf("working dir = %q", c.WorkingDir)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":   "https://github.com/sparkplug-io/sparkplug",
		"org.opencontainers.image.version":  "v1.2.3",
		"org.opencontainers.image.licenses": "Apache-2.0",
	} {
		if got := c.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}

	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var files []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := "/" + strings.TrimPrefix(hdr.Name, "/")
		files = append(files, p)
		if p != "/sparkplug" {
			continue
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Mode != 0o755 || hdr.Uid != 0 || hdr.Gid != 0 {
			t.Errorf("/sparkplug: type %c mode %o owner %d:%d, want a regular file 755 owned by 0:0", hdr.Typeflag, hdr.Mode, hdr.Uid, hdr.Gid)
		}
		if !hdr.ModTime.Equal(epoch) {
			t.Errorf("/sparkplug mtime %v, want the fixed %v", hdr.ModTime, epoch)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, fakeBinary) {
			t.Error("/sparkplug is not the binary given")
		}
	}
	// Exactly the binary: no shell, no /etc/passwd, nothing else.
	if diff := cmp.Diff([]string{"/sparkplug"}, files); diff != "" {
		t.Errorf("files in the image (-want +got):\n%s", diff)
	}
}

func numeric(s string) bool {
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}

// TestImageIsReproducible: the same binary gives the same bytes.
func TestImageIsReproducible(t *testing.T) {
	a, err := os.ReadFile(writeImage(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(writeImage(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two builds of the same binary differ")
	}
}

// TestDockerfileDescribesTheSameImage: the Dockerfile's final stage and
// buildImage agree on everything a container runtime reads.
func TestDockerfileDescribesTheSameImage(t *testing.T) {
	f, err := os.Open("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Instructions of the last stage, continuation lines joined.
	var stage []string
	var line string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			line += s + " "
			continue
		}
		line += l
		if strings.HasPrefix(line, "FROM ") {
			stage = nil
		}
		stage = append(stage, line)
		line = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ins := range stage {
		k, v, _ := strings.Cut(ins, " ")
		got[k] = v
	}
	jsonArray := func(v []string) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	want := map[string]string{
		"FROM":       "scratch",
		"USER":       user,
		"WORKDIR":    workingDir,
		"ENTRYPOINT": jsonArray([]string{products["sparkplug"].binaryPath}),
		"CMD":        jsonArray(products["sparkplug"].cmd),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Dockerfile final stage %s %s, hack/image has %s", k, got[k], v)
		}
	}
	if copyIns := got["COPY"]; !strings.HasSuffix(copyIns, " "+products["sparkplug"].binaryPath) || !strings.Contains(copyIns, "--chmod=0755") || !strings.Contains(copyIns, "--chown=0:0") {
		t.Errorf("Dockerfile COPY %s: want the binary at %s, 0755, owned by 0:0", copyIns, products["sparkplug"].binaryPath)
	}
	if !strings.Contains(got["LABEL"], `org.opencontainers.image.source="`+sourceURL+`"`) {
		t.Errorf("Dockerfile LABEL %s lacks the source %s", got["LABEL"], sourceURL)
	}
	if !strings.Contains(got["LABEL"], `org.opencontainers.image.licenses="`+license+`"`) {
		t.Errorf("Dockerfile LABEL %s lacks the licence %s", got["LABEL"], license)
	}
}

// TestCheckBinary builds tiny programs and checks that only a static linux
// binary of the image's architecture is accepted.
func TestCheckBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(goarch string) string {
		out := filepath.Join(dir, "hello-"+goarch)
		cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", out, src)
		cmd.Dir = dir // outside the module: a lone file needs no go.mod
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch, "GOFLAGS=")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, b)
		}
		return out
	}
	amd64 := build("amd64")
	if err := checkBinary(amd64, "amd64"); err != nil {
		t.Errorf("a static linux/amd64 binary: %v", err)
	}
	if err := checkBinary(amd64, "arm64"); err == nil || !strings.Contains(err.Error(), "built for EM_X86_64") {
		t.Errorf("an amd64 binary for an arm64 image: err = %v", err)
	}
	if err := checkBinary(src, "amd64"); err == nil || !strings.Contains(err.Error(), "not an ELF binary") {
		t.Errorf("a Go source file: err = %v", err)
	}
	// A dynamically linked program of this machine, if there is one.
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		if _, err := os.Stat("/bin/ls"); err == nil {
			if err := checkBinary("/bin/ls", "amd64"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
				t.Errorf("/bin/ls: err = %v", err)
			}
		}
	}
}

func TestRunRejects(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"bad ref", []string{"-ref", "Not A Ref"}, "-ref"},
		{"missing binary", []string{"-binary", filepath.Join(t.TempDir(), "nope")}, "not an ELF binary"},
		{"stray argument", []string{"stray"}, "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// The acknowledger's image (-product sparkplug-ack) is the same kind of
// image: one root-owned file at /sparkplug-ack, its entrypoint, no
// command, run as 8737:8737, labelled as itself; the same binary gives
// the same digest.
func TestAcknowledgerImage(t *testing.T) {
	p := products["sparkplug-ack"]
	img, err := buildImage(p, fakeBinary, "v1.2.3", "arm64")
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.Architecture != "arm64" || c.User != user || len(c.Cmd) != 0 || c.Labels["org.opencontainers.image.title"] != "sparkplug-ack" ||
		c.Labels["org.opencontainers.image.licenses"] != "Apache-2.0" {
		t.Errorf("config: arch %s user %s cmd %q title %q", cf.Architecture, c.User, c.Cmd, c.Labels["org.opencontainers.image.title"])
	}
	if diff := cmp.Diff([]string{"/sparkplug-ack"}, c.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
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
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	if err != nil || hdr.Name != "sparkplug-ack" || hdr.Mode != 0o755 || hdr.Uid != 0 {
		t.Fatalf("layer's first file %+v (%v), want sparkplug-ack 0755 owned by root", hdr, err)
	}
	if _, err := tr.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("the layer holds more than the binary (%v)", err)
	}
	again, err := buildImage(p, fakeBinary, "v1.2.3", "arm64")
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Fatalf("two builds: %s and %s", d1, d2)
	}
	if err := run([]string{"-product", "sparkplug-ackk"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "-product") {
		t.Fatalf("an unknown product: %v, want an error naming -product", err)
	}
}
