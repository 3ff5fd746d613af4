// Package release holds the tests of `make release` (hack/release.sh): a
// release built from this repository holds a multi-platform image index,
// every manifest it ships runs exactly that index, pinned by digest, its
// SBOM names the modules compiled in, and its chart goes through an OCI
// registry (helm push, show, template, pull) unchanged. The commands
// below it: pinchart pins the Helm chart's values and Artifact Hub images;
// sbom writes the SBOM; kustomize renders the install bundles as `kubectl
// kustomize` does, which a test here holds it to; push (make push) puts a
// release into an OCI registry, and a test here runs docs/install.md's
// install from a clone, make release and make push, against one.
package release
