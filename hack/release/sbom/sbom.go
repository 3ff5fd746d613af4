package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// SPDX 2.3 JSON: the fields this document uses, named as the
// specification's JSON schema names them.
type (
	Document struct {
		SPDXVersion       string         `json:"spdxVersion"`
		DataLicense       string         `json:"dataLicense"`
		SPDXID            string         `json:"SPDXID"`
		Name              string         `json:"name"`
		DocumentNamespace string         `json:"documentNamespace"`
		CreationInfo      CreationInfo   `json:"creationInfo"`
		Packages          []Package      `json:"packages"`
		Relationships     []Relationship `json:"relationships"`
	}
	CreationInfo struct {
		Created  string   `json:"created"`
		Creators []string `json:"creators"`
		Comment  string   `json:"comment,omitempty"`
	}
	Package struct {
		Name                  string        `json:"name"`
		SPDXID                string        `json:"SPDXID"`
		VersionInfo           string        `json:"versionInfo,omitempty"`
		DownloadLocation      string        `json:"downloadLocation"`
		FilesAnalyzed         bool          `json:"filesAnalyzed"`
		SourceInfo            string        `json:"sourceInfo,omitempty"`
		PrimaryPackagePurpose string        `json:"primaryPackagePurpose,omitempty"`
		Checksums             []Checksum    `json:"checksums,omitempty"`
		LicenseConcluded      string        `json:"licenseConcluded"`
		LicenseDeclared       string        `json:"licenseDeclared"`
		CopyrightText         string        `json:"copyrightText"`
		ExternalRefs          []ExternalRef `json:"externalRefs"`
	}
	Checksum struct {
		Algorithm     string `json:"algorithm"`
		ChecksumValue string `json:"checksumValue"`
	}
	ExternalRef struct {
		ReferenceCategory string `json:"referenceCategory"`
		ReferenceType     string `json:"referenceType"`
		ReferenceLocator  string `json:"referenceLocator"`
	}
	Relationship struct {
		SPDXElementID      string `json:"spdxElementId"`
		RelationshipType   string `json:"relationshipType"`
		RelatedSPDXElement string `json:"relatedSpdxElement"`
	}
)

const (
	spdxVersion = "SPDX-2.3"
	dataLicense = "CC0-1.0" // the only one SPDX allows for the document itself
	documentID  = "SPDXRef-DOCUMENT"
	noAssertion = "NOASSERTION"
	// license is the licence sparkplug declares (LICENSE), the main
	// package's; the modules' are not asserted.
	license = "Apache-2.0"
	// goProxy is where the go command downloads a module version's zip.
	goProxy = "https://proxy.golang.org/"
)

// Options name what the document describes.
type Options struct {
	Name    string    // the product, sparkplug
	Version string    // the release, vX.Y.Z
	Created time.Time // the document's creation time
	// Revision is the commit built; empty: the binaries' vcs.revision
	// (none when built with -buildvcs=false).
	Revision string
}

// module is one module version compiled into a binary.
type module struct{ path, version, sum string }

// Build is the SBOM of the binaries whose build infos are given: they
// must share a main module (one release's commands, for each platform).
// The main package is first, then the Go standard library, then the
// modules by path and version; a replaced module is listed as its
// replacement, the code that was compiled in.
func Build(o Options, infos []*debug.BuildInfo) (*Document, error) {
	if len(infos) == 0 {
		return nil, fmt.Errorf("no build info")
	}
	mainPath := infos[0].Main.Path
	var goVersions, revisions []string
	if o.Revision != "" {
		revisions = []string{o.Revision}
	}
	seen := map[module]bool{}
	var mods []module
	for _, bi := range infos {
		if bi.Main.Path != mainPath {
			return nil, fmt.Errorf("binaries of two main modules, %s and %s", mainPath, bi.Main.Path)
		}
		goVersions = appendNew(goVersions, strings.Fields(bi.GoVersion)[0])
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && o.Revision == "" {
				revisions = appendNew(revisions, s.Value)
			}
		}
		for _, d := range bi.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			m := module{d.Path, d.Version, d.Sum}
			if !seen[m] {
				seen[m] = true
				mods = append(mods, m)
			}
		}
	}
	if mainPath == "" {
		return nil, fmt.Errorf("the binaries name no main module")
	}
	slices.SortFunc(mods, func(a, b module) int {
		return cmp.Or(strings.Compare(a.path, b.path), strings.Compare(a.version, b.version))
	})

	ids := map[string]bool{documentID: true}
	main := Package{
		Name: o.Name, SPDXID: uniqueID(ids, "SPDXRef-Package-"+o.Name), VersionInfo: o.Version,
		DownloadLocation: noAssertion, PrimaryPackagePurpose: "APPLICATION",
		ExternalRefs: []ExternalRef{purl(mainPath, o.Version)},
	}
	if len(revisions) > 0 {
		main.SourceInfo = "built from " + mainPath + " at revision " + strings.Join(revisions, ", ")
	}
	pkgs := []Package{main}
	for _, v := range goVersions {
		pkgs = append(pkgs, Package{
			Name: "stdlib", SPDXID: uniqueID(ids, "SPDXRef-Package-stdlib-"+v), VersionInfo: v,
			DownloadLocation: "https://dl.google.com/go/" + v + ".src.tar.gz", PrimaryPackagePurpose: "LIBRARY",
			ExternalRefs: []ExternalRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/stdlib@" + v}},
		})
	}
	for _, m := range mods {
		p := Package{
			Name: m.path, SPDXID: uniqueID(ids, "SPDXRef-Package-"+m.path+"-"+m.version), VersionInfo: m.version,
			DownloadLocation: noAssertion, PrimaryPackagePurpose: "LIBRARY",
			ExternalRefs: []ExternalRef{purl(m.path, m.version)},
		}
		if m.version != "" {
			p.DownloadLocation = goProxy + escape(m.path) + "/@v/" + escape(m.version) + ".zip"
		}
		if sum, ok := h1SHA256(m.sum); ok {
			p.Checksums = []Checksum{{"SHA256", sum}}
		}
		pkgs = append(pkgs, p)
	}
	rels := []Relationship{{documentID, "DESCRIBES", main.SPDXID}}
	for i := range pkgs {
		p := &pkgs[i]
		p.LicenseConcluded, p.LicenseDeclared, p.CopyrightText = noAssertion, noAssertion, noAssertion
		if i == 0 {
			p.LicenseDeclared = license
		} else {
			rels = append(rels, Relationship{main.SPDXID, "DEPENDS_ON", p.SPDXID})
		}
	}

	// The namespace is unique to this content, and the same for the same
	// release.
	h := sha256.New()
	fmt.Fprintln(h, o.Name, o.Version, mainPath, goVersions, revisions)
	for _, m := range mods {
		fmt.Fprintln(h, m.path, m.version, m.sum)
	}
	return &Document{
		SPDXVersion: spdxVersion, DataLicense: dataLicense, SPDXID: documentID,
		Name:              o.Name + "-" + o.Version,
		DocumentNamespace: "https://" + mainPath + "/spdx/" + o.Name + "-" + o.Version + "-" + hex.EncodeToString(h.Sum(nil))[:16],
		CreationInfo: CreationInfo{
			Created:  o.Created.UTC().Format(time.RFC3339),
			Creators: []string{"Tool: " + mainPath + "/hack/release/sbom"},
			Comment:  "The modules compiled into the release's binaries, from their Go build information. A module's SHA256 checksum is its go.sum hash (h1), the SHA-256 of the module's file hashes, not of a download.",
		},
		Packages:      pkgs,
		Relationships: rels,
	}, nil
}

// purl is a Go module's package URL: pkg:golang/PATH@VERSION.
func purl(path, version string) ExternalRef {
	loc := "pkg:golang/" + purlEscape(path)
	if version != "" {
		loc += "@" + purlEscape(version)
	}
	return ExternalRef{"PACKAGE-MANAGER", "purl", loc}
}

// purlEscape percent-encodes s segment by segment, "+" too (a version's
// +incompatible), keeping the slashes.
func purlEscape(s string) string {
	segs := strings.Split(s, "/")
	for i, seg := range segs {
		segs[i] = strings.ReplaceAll(url.PathEscape(seg), "+", "%2B")
	}
	return strings.Join(segs, "/")
}

// escape is a module path or version as the module proxy spells it: each
// capital letter as "!" and its lower case.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// h1SHA256 is the hex of a go.sum hash "h1:BASE64" (a SHA-256).
func h1SHA256(sum string) (string, bool) {
	b64, ok := strings.CutPrefix(sum, "h1:")
	if !ok {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(b) != sha256.Size {
		return "", false
	}
	return hex.EncodeToString(b), true
}

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// uniqueID is id with the characters an SPDX identifier may not hold
// replaced by "-", made unique among ids with a numeric suffix.
func uniqueID(ids map[string]bool, id string) string {
	id = idUnsafe.ReplaceAllString(id, "-")
	for i, base := 2, id; ids[id]; i++ {
		id = fmt.Sprintf("%s-%d", base, i)
	}
	ids[id] = true
	return id
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}
