package step

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
)

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
	return hex.EncodeToString(sum[:])[:identity.KeyLength], nil
}
