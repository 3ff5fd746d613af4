// Command sbom writes the SPDX 2.3 JSON software bill of materials of a
// sparkplug release from the module graph recorded in its binaries (what
// `go version -m` prints, read with debug/buildinfo): one package for
// sparkplug, one for the Go standard library and one per module compiled
// in, each with its version, a purl and the module's go.sum hash, and the
// relationships DESCRIBES (the document, sparkplug) and DEPENDS_ON
// (sparkplug, each other package).
//
//	go run ./hack/release/sbom -version vX.Y.Z -revision COMMIT -created 2026-01-02T03:04:05Z -out sparkplug-vX.Y.Z.spdx.json BINARY...
//
// hack/release.sh runs it on the binaries in the release's images. The
// document is a function of its flags and the binaries: the same release
// writes the same bytes.
package main

import (
	"debug/buildinfo"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("sbom", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	fs.StringVar(&o.Name, "name", "sparkplug", "the product's name, the document's and its main package's")
	fs.StringVar(&o.Version, "version", "", "the release's version (vX.Y.Z), the main package's versionInfo")
	fs.StringVar(&o.Revision, "revision", "", "the commit the binaries were built from (default: their vcs.revision, if stamped)")
	created := fs.String("created", "", "the document's creation time, RFC 3339 (the release commit's time keeps it reproducible)")
	out := fs.String("out", "", "the file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.Version == "" || *created == "" || *out == "" || fs.NArg() == 0 {
		return fmt.Errorf("need -version, -created, -out and at least one binary")
	}
	t, err := time.Parse(time.RFC3339, *created)
	if err != nil {
		return fmt.Errorf("-created: %w", err)
	}
	o.Created = t
	infos := make([]*debug.BuildInfo, 0, fs.NArg())
	for _, bin := range fs.Args() {
		bi, err := buildinfo.ReadFile(bin)
		if err != nil {
			return fmt.Errorf("read the build info of %s: %w", bin, err)
		}
		infos = append(infos, bi)
	}
	doc, err := Build(o, infos)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(*out, append(b, '\n'), 0o644)
}
