// Package scopetest closes, for tests, the gap a fake clientset leaves
// between an informer's list and its watch, so that a test can write
// right after package scope's caches sync and know they will see it.
package scopetest
