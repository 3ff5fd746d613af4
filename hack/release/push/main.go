package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "push:", err)
		os.Exit(1)
	}
}

// versionRE is hack/release.sh's rule for VERSION.
var versionRE = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the release's directory (bin/release/VERSION)")
	version := fs.String("version", "", "the release's VERSION (vX.Y.Z)")
	image := fs.String("image", "", "sparkplug's repository (HOST/PATH/sparkplug); its index goes to IMAGE:VERSION")
	ackImage := fs.String("ack-image", "", "the acknowledger's repository (default IMAGE-ack)")
	charts := fs.String("charts", "", "the charts' repository (HOST/PATH/charts); the chart goes to CHARTS/sparkplug:X.Y.Z")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *image == "" || *charts == "" || fs.NArg() != 0 {
		return fmt.Errorf("need -dir, -version, -image and -charts, and no arguments")
	}
	if !versionRE.MatchString(*version) {
		return fmt.Errorf("VERSION %q is not vMAJOR.MINOR.PATCH[-PRERELEASE]", *version)
	}
	if *ackImage == "" {
		*ackImage = *image + "-ack"
	}
	chartRepo, err := name.NewRepository(*charts)
	if err != nil {
		return fmt.Errorf("-charts: %w", err)
	}
	opts := []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain), remote.WithUserAgent("sparkplug-push")}
	for _, p := range []struct{ archive, repository string }{
		{"sparkplug-" + *version + "-image.oci.tar", *image},
		{"sparkplug-ack-" + *version + "-image.oci.tar", *ackImage},
	} {
		ref, err := name.NewTag(p.repository + ":" + *version)
		if err != nil {
			return fmt.Errorf("%s: %w", p.repository, err)
		}
		digest, err := pushIndex(ctx, filepath.Join(*dir, p.archive), ref, opts...)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "pushed %s@%s\n", ref, digest)
	}
	tag, digest, err := pushChart(ctx, filepath.Join(*dir, "sparkplug-"+strings.TrimPrefix(*version, "v")+".tgz"), chartRepo, opts...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pushed %s@%s: helm install sparkplug oci://%s --version %s\n", tag, digest, tag.Context(), tag.TagStr())
	return nil
}
