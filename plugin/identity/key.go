package identity

import (
	"crypto/sha256"
	"encoding/hex"
)

// KeyLength is the number of hex characters of a template key
// (step.Key); it fits a label value.
const KeyLength = 20

// NodeHash is a short, label-safe hash of a node id (ids can exceed the 63
// characters a label value may hold).
func NodeHash(nodeID string) string {
	sum := sha256.Sum256([]byte(nodeID))
	return hex.EncodeToString(sum[:])[:16]
}
