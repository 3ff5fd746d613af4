package mdlinks

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every Markdown file of the repository links only to files, directories
// and headings that exist.
func TestRepositoryLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := Files(root, "hack/mdlinks/testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Markdown files found")
	}
	problems, err := Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

func TestGoodTreeHasNoProblems(t *testing.T) {
	root := filepath.Join("testdata", "good")
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"README.md", "docs/install.md"}, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	problems, err := Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

func TestBrokenLinksAndAnchorsAreNamedByFileAndLine(t *testing.T) {
	root := filepath.Join("testdata", "broken")
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		"README.md:3: docs/missing.md: no file docs/missing.md",
		"README.md:4: docs/install.md#install-with-kustomize: no heading #install-with-kustomize in docs/install.md",
		"README.md:6: #nowhere: no heading #nowhere in README.md",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"sparkplug":                                  "sparkplug",
		"A Spark step":                               "a-spark-step",
		"What happens when ...":                      "what-happens-when-",
		"Monitoring: `sparkplug monitor`":            "monitoring-sparkplug-monitor",
		"sparkplug's own settings":                   "sparkplugs-own-settings",
		"The spark body: field reference":            "the-spark-body-field-reference",
		"What a step becomes: `sparkplug render`":    "what-a-step-becomes-sparkplug-render",
		"Releases, upgrades, removal":                "releases-upgrades-removal",
		"A sidecar of your own, with kustomize":      "a-sidecar-of-your-own-with-kustomize",
		"`sparkplug monitor` (optional)":             "sparkplug-monitor-optional",
		"snake_case and _emphasis_":                  "snake_case-and-emphasis",
		"[A link](https://example.com) and **bold**": "a-link-and-bold",
		"Ünïcode 3.7":                                "ünïcode-37",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestDuplicateHeadingsAreNumbered(t *testing.T) {
	a := Anchors("# Usage\n\n## Usage\n\n### Usage\n\n```\n# Usage\n```\n")
	for _, want := range []string{"usage", "usage-1", "usage-2"} {
		if !a[want] {
			t.Errorf("no anchor %s in %v", want, a)
		}
	}
	if a["usage-3"] {
		t.Error("a heading inside a fence counted")
	}
}

func TestLinksOutsideCodeOnly(t *testing.T) {
	src := "a [x](one.md) `[y](two.md)`\n\n```\n[z](three.md)\n```\n[w]( <four five.md> \"t\")\n"
	var got []string
	for _, l := range Links(src) {
		got = append(got, l.Dest)
	}
	if diff := cmp.Diff([]string{"one.md", "four five.md"}, got); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
}
