package convert

// Describe is describe, for the package's external tests
// (kso_examples_test.go, which renders with package render, which
// imports this package).
func Describe(r Result) string { return describe(r) }
