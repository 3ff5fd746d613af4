package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

// KeyLength is the number of hex characters of a template key; it fits a
// label value.
const KeyLength = 20

// Key returns a label-safe hash of the canonical form of an Argo template.
// The agent sends the template it decoded from the WorkflowTaskSet, so a
// request and its TaskSet entry are compared after the same decode and a
// key-sorted re-encode, never as raw bytes.
func Key(t *wfv1.Template) (string, error) {
	if t == nil {
		return "", fmt.Errorf("template is nil")
	}
	typed, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("encode template: %w", err)
	}
	var generic any
	if err := json.Unmarshal(typed, &generic); err != nil {
		return "", fmt.Errorf("decode template: %w", err)
	}
	canonical, err := json.Marshal(generic) // maps marshal with sorted keys
	if err != nil {
		return "", fmt.Errorf("encode canonical template: %w", err)
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])[:KeyLength], nil
}

// NodeHash is a short, label-safe hash of a node id (ids can exceed the 63
// characters a label value may hold).
func NodeHash(nodeID string) string {
	sum := sha256.Sum256([]byte(nodeID))
	return hex.EncodeToString(sum[:])[:16]
}
