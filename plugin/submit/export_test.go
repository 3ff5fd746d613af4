package submit

import "testing"

// SetFallbackTempDirs replaces fallbackTempDirs for the test.
func SetFallbackTempDirs(t *testing.T, dirs ...string) {
	old := fallbackTempDirs
	fallbackTempDirs = dirs
	t.Cleanup(func() { fallbackTempDirs = old })
}
