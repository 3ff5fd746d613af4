package identity

import (
	"testing"
)

func TestNodeHashIsLabelSafe(t *testing.T) {
	h := NodeHash("a-very-long-workflow-name-with-many-parts-1234567890-3456789012")
	if len(h) != 16 {
		t.Fatalf("hash %q has %d characters", h, len(h))
	}
	if NodeHash("a") == NodeHash("b") {
		t.Fatal("different ids share a hash")
	}
}
