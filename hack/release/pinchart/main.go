// Command pinchart pins a copy of the sparkplug chart to a release's
// images: it sets image.repository, image.tag and image.digest in the
// chart's values.yaml, and the same of ackImage (controller mode's
// acknowledger, same tag) when -ack-digest is given, keeping its comments,
// so that `helm install` of the packaged chart runs exactly the released
// images, in either mode.
//
//	go run ./hack/release/pinchart -chart DIR -repository REPO -tag vX.Y.Z -digest sha256:... [-ack-repository REPO -ack-digest sha256:...]
//
// hack/release.sh runs it on a copy of manifests/chart/sparkplug.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"gopkg.in/yaml.v3"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "pinchart:", err)
		os.Exit(1)
	}
}

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("pinchart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	chart := fs.String("chart", "", "the chart directory to change")
	repository := fs.String("repository", "", "image.repository")
	tag := fs.String("tag", "", "image.tag")
	digest := fs.String("digest", "", "image.digest (sha256:...)")
	ackRepository := fs.String("ack-repository", "", "ackImage.repository")
	ackDigest := fs.String("ack-digest", "", "ackImage.digest (sha256:...); ackImage.tag is -tag")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *chart == "" || *repository == "" || *tag == "" || !digestRE.MatchString(*digest) {
		return fmt.Errorf("need -chart, -repository, -tag and a -digest sha256:<64 hex>")
	}
	if (*ackRepository != "" || *ackDigest != "") && (*ackRepository == "" || !digestRE.MatchString(*ackDigest)) {
		return fmt.Errorf("need both -ack-repository and an -ack-digest sha256:<64 hex>")
	}
	path := filepath.Join(*chart, "values.yaml")
	in, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := pin(in, "image", map[string]string{"repository": *repository, "tag": *tag, "digest": *digest})
	if err == nil && *ackDigest != "" {
		out, err = pin(out, "ackImage", map[string]string{"repository": *ackRepository, "tag": *tag, "digest": *ackDigest})
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}

// pin sets the keys of values' top-level mapping named key (image,
// ackImage).
func pin(values []byte, key string, set map[string]string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(values, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("values are not a mapping")
	}
	image := lookup(doc.Content[0], key)
	if image == nil || image.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("no %s mapping", key)
	}
	for k, v := range set {
		n := lookup(image, k)
		if n == nil {
			return nil, fmt.Errorf("no %s.%s", key, k)
		}
		n.Kind, n.Tag, n.Value, n.Style = yaml.ScalarNode, "!!str", v, yaml.DoubleQuotedStyle
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// lookup is the value of key in mapping m, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
