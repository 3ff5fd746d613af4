// Package release holds the test of `make release` (hack/release.sh): a
// release built from this repository holds a multi-platform image index,
// and every manifest it ships runs exactly that index, pinned by digest.
// pinchart, below it, pins the Helm chart's values.
package release
