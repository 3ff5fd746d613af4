package main

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A known binary (testdata/hello, linking go-cmp and sigs.k8s.io/yaml),
// built here: its SBOM is an SPDX 2.3 document with every field the
// specification requires, and every module `go version -m` lists for it
// is a package with its version, purl, download location and go.sum hash,
// which sparkplug's package DEPENDS_ON.
func TestSBOMOfAKnownBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "hello")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./testdata/hello")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	want := goVersionM(t, bin)
	for _, known := range []string{"github.com/google/go-cmp", "sigs.k8s.io/yaml"} {
		if _, ok := want[known]; !ok {
			t.Fatalf("go version -m lists no %s: %v", known, want)
		}
	}

	out := filepath.Join(dir, "sbom.spdx.json")
	if err := run([]string{"-version", "v1.2.3", "-revision", "0123abc", "-created", "2026-01-02T03:04:05Z", "-out", out, bin, bin}, io.Discard); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Read as plain JSON, not as the types that wrote it.
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT",
		"name": "sparkplug-v1.2.3"} {
		if doc[k] != v {
			t.Errorf("%s %v, want %q", k, doc[k], v)
		}
	}
	if ns, _ := doc["documentNamespace"].(string); !strings.HasPrefix(ns, "https://") || strings.Contains(ns, "#") {
		t.Errorf("documentNamespace %q: want an absolute URI without a fragment", ns)
	}
	info, _ := doc["creationInfo"].(map[string]any)
	creators, _ := info["creators"].([]any)
	if info["created"] != "2026-01-02T03:04:05Z" || len(creators) == 0 || !strings.HasPrefix(creators[0].(string), "Tool: ") {
		t.Errorf("creationInfo %v", info)
	}

	idRE := regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)
	ids := map[string]bool{}
	byName := map[string]map[string]any{}
	pkgs, _ := doc["packages"].([]any)
	for _, p := range pkgs {
		p := p.(map[string]any)
		id, _ := p["SPDXID"].(string)
		if !idRE.MatchString(id) || ids[id] {
			t.Errorf("package SPDXID %q: invalid or repeated", id)
		}
		ids[id] = true
		for _, k := range []string{"name", "downloadLocation", "licenseConcluded", "licenseDeclared", "copyrightText"} {
			if s, _ := p[k].(string); s == "" {
				t.Errorf("package %s: no %s", id, k)
			}
		}
		byName[p["name"].(string)] = p
	}
	main := byName["sparkplug"]
	if main == nil || main["versionInfo"] != "v1.2.3" || purlOf(main) != "pkg:golang/github.com/sparkplug-io/sparkplug@v1.2.3" {
		t.Fatalf("main package %v", main)
	}
	if main["licenseDeclared"] != "Apache-2.0" {
		t.Errorf("main package's licenseDeclared %v, want Apache-2.0 (LICENSE)", main["licenseDeclared"])
	}
	if main["sourceInfo"] != "built from github.com/sparkplug-io/sparkplug at revision 0123abc" {
		t.Errorf("main package's sourceInfo %v", main["sourceInfo"])
	}
	if p := byName["stdlib"]; p == nil || !strings.HasPrefix(purlOf(p), "pkg:golang/stdlib@go1.") {
		t.Errorf("stdlib package %v", p)
	}

	rels := map[string]bool{}
	for _, r := range doc["relationships"].([]any) {
		r := r.(map[string]any)
		from, to := r["spdxElementId"].(string), r["relatedSpdxElement"].(string)
		if !ids[from] && from != "SPDXRef-DOCUMENT" || !ids[to] {
			t.Errorf("relationship %v names an element the document does not have", r)
		}
		rels[from+" "+r["relationshipType"].(string)+" "+to] = true
	}
	if !rels["SPDXRef-DOCUMENT DESCRIBES "+main["SPDXID"].(string)] {
		t.Errorf("the document DESCRIBES no sparkplug: %v", rels)
	}

	for path, m := range want {
		p := byName[path]
		if p == nil {
			t.Errorf("module %s %s: no package", path, m.version)
			continue
		}
		if p["versionInfo"] != m.version {
			t.Errorf("%s: versionInfo %v, want %s", path, p["versionInfo"], m.version)
		}
		if got, want := purlOf(p), "pkg:golang/"+path+"@"+m.version; got != want {
			t.Errorf("%s: purl %q, want %q", path, got, want)
		}
		if got, want := p["downloadLocation"], "https://proxy.golang.org/"+path+"/@v/"+m.version+".zip"; got != want {
			t.Errorf("%s: downloadLocation %v, want %s", path, got, want)
		}
		sum, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(m.sum, "h1:"))
		cs, _ := p["checksums"].([]any)
		if len(cs) != 1 || cs[0].(map[string]any)["algorithm"] != "SHA256" ||
			cs[0].(map[string]any)["checksumValue"] != hex.EncodeToString(sum) {
			t.Errorf("%s: checksums %v, want SHA256 %x (%s)", path, cs, sum, m.sum)
		}
		if !rels[main["SPDXID"].(string)+" DEPENDS_ON "+p["SPDXID"].(string)] {
			t.Errorf("sparkplug does not DEPENDS_ON %s", path)
		}
	}
	// Two of the same binary: each module once.
	if len(pkgs) != 2+len(want) {
		t.Errorf("%d packages, want sparkplug, stdlib and %d modules", len(pkgs), len(want))
	}
}

// Escaping: capitals as the module proxy spells them, "+" in a purl.
func TestEscapes(t *testing.T) {
	if got := escape("github.com/BurntSushi/toml"); got != "github.com/!burnt!sushi/toml" {
		t.Errorf("escape: %s", got)
	}
	if got := purl("github.com/docker/cli", "v29.7.2+incompatible").ReferenceLocator; got != "pkg:golang/github.com/docker/cli@v29.7.2%2Bincompatible" {
		t.Errorf("purl: %s", got)
	}
}

type modVersion struct{ version, sum string }

// goVersionM is the modules `go version -m` lists as a binary's deps
// (=> replacements resolved), by path.
func goVersionM(t *testing.T, bin string) map[string]modVersion {
	t.Helper()
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	mods := map[string]modVersion{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Split(strings.TrimSpace(sc.Text()), "\t")
		switch {
		case len(f) >= 3 && f[0] == "dep":
			m := modVersion{version: f[2]}
			if len(f) > 3 {
				m.sum = f[3]
			}
			mods[f[1]] = m
		case len(f) >= 3 && f[0] == "=>":
			// The replacement of the dep above.
			t.Fatalf("the known binary has a replaced module: %s", sc.Text())
		}
	}
	return mods
}

func purlOf(p map[string]any) string {
	refs, _ := p["externalRefs"].([]any)
	for _, r := range refs {
		r := r.(map[string]any)
		if r["referenceType"] == "purl" && r["referenceCategory"] == "PACKAGE-MANAGER" {
			return r["referenceLocator"].(string)
		}
	}
	return ""
}
