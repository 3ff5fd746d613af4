//go:build e2e

package images

import (
	"fmt"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ArgoexecRef names the argoexec image of an Argo version, for the
// controller's executor.image (or --executor-image).
func ArgoexecRef(version string) string { return "e2e.sparkplug.test/argoexec:" + version }

// Argoexec builds the image of the argoexec binary at bin (hack/tools.sh's,
// or hack/argo.sh's for another Argo version) as ref, in dir.
//
// It is laid out as Argo's own argoexec image (its Dockerfile's argoexec
// target on distroless/static): /bin/argoexec, ENTRYPOINT ["argoexec"]
// found through PATH (the controller runs `argoexec init|wait|agent`, and
// the emissary's init copies the binary it finds with exec.LookPath into
// /var/run/argo), no USER (root; the controller sets uid 8737 where it
// wants it), /etc/nsswitch.conf, /etc/passwd and /tmp as distroless has
// them. Left out, as no test needs them: /etc/ssh/ssh_known_hosts (git
// artifacts over SSH), /etc/mime.types, and distroless's CA bundle (the
// agent reaches sidecars over plain HTTP on localhost, the API server with
// the ServiceAccount's CA).
func Argoexec(bin, ref, dir string) (Image, error) {
	b, err := os.ReadFile(bin)
	if err != nil {
		return Image{}, fmt.Errorf("argoexec: %w", err)
	}
	entries := append(etcFiles(
		"root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
		"root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n",
	),
		entry{name: "bin", mode: 0o755, dir: true},
		entry{name: "bin/argoexec", mode: 0o755, data: b},
	)
	cfg := v1.Config{
		Entrypoint: []string{"argoexec"},
		WorkingDir: "/",
		Env:        []string{pathEnv},
	}
	return writeImage(filepath.Join(dir, "argoexec.tar"), ref, cfg, entries, "e2e/images: COPY argoexec /bin/")
}
