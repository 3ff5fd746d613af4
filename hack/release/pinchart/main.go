// Command pinchart pins a copy of the sparkplug chart to a release's
// images: it sets image.repository, image.tag and image.digest in the
// chart's values.yaml, and the same of ackImage (controller mode's
// acknowledger, same tag) when -ack-digest is given, keeping its comments,
// so that `helm install` of the packaged chart runs exactly the released
// images, in either mode. In Chart.yaml it pins the same images in the
// Artifact Hub annotation artifacthub.io/images and sets
// artifacthub.io/prerelease to whether -tag has a pre-release suffix.
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
	"slices"
	"strconv"
	"strings"

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
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return err
	}
	images := map[string]string{"sparkplug": *repository + ":" + *tag + "@" + *digest}
	if *ackDigest != "" {
		images["sparkplug-ack"] = *ackRepository + ":" + *tag + "@" + *ackDigest
	}
	path = filepath.Join(*chart, "Chart.yaml")
	if in, err = os.ReadFile(path); err != nil {
		return err
	}
	if out, err = annotate(in, images, strings.Contains(*tag, "-")); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}

// imageEntry is one image of the artifacthub.io/images annotation.
type imageEntry struct {
	Name  string `yaml:"name"`
	Image string `yaml:"image"`
}

// annotate sets the image of each entry of Chart.yaml's
// artifacthub.io/images annotation that images names (by entry name; each
// must be there), and artifacthub.io/prerelease.
func annotate(chart []byte, images map[string]string, prerelease bool) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(chart, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("Chart.yaml is not a mapping")
	}
	ann := lookup(doc.Content[0], "annotations")
	if ann == nil || ann.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("no annotations")
	}
	imagesNode, pre := lookup(ann, "artifacthub.io/images"), lookup(ann, "artifacthub.io/prerelease")
	if imagesNode == nil || pre == nil {
		return nil, fmt.Errorf("no artifacthub.io/images or artifacthub.io/prerelease annotation")
	}
	var list []imageEntry
	if err := yaml.Unmarshal([]byte(imagesNode.Value), &list); err != nil {
		return nil, fmt.Errorf("artifacthub.io/images: %w", err)
	}
	for name, image := range images {
		i := slices.IndexFunc(list, func(e imageEntry) bool { return e.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("artifacthub.io/images has no %s", name)
		}
		list[i].Image = image
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(list); err != nil {
		return nil, err
	}
	imagesNode.Value, imagesNode.Style = b.String(), yaml.LiteralStyle
	pre.Value, pre.Style, pre.Tag = strconv.FormatBool(prerelease), yaml.DoubleQuotedStyle, "!!str"
	b.Reset()
	enc = yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
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
