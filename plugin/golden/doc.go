// Package golden is for tests: it compares what the code makes with the
// golden files under a package's testdata, and rewrites them when the test
// binary runs with -update (make update does, for every package with
// golden files). Review the diff of every rewritten file.
package golden
