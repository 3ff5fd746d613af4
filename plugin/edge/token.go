package edge

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// TokenFile compares bearer tokens with the content of a file, re-read
// when the file changes (the agent's init container writes it, possibly
// after this process started).
type TokenFile struct {
	Path string

	mu      sync.Mutex
	modTime time.Time
	size    int64
	sum     [sha256.Size]byte
	loaded  bool
}

// Matches compares in constant time. An empty token never matches.
func (t *TokenFile) Matches(bearer string) (bool, error) {
	sum, err := t.current()
	if err != nil {
		return false, err
	}
	if bearer == "" {
		return false, nil
	}
	got := sha256.Sum256([]byte(bearer))
	return subtle.ConstantTimeCompare(got[:], sum[:]) == 1, nil
}

func (t *TokenFile) current() ([sha256.Size]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fi, err := os.Stat(t.Path)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("stat token file: %w", err)
	}
	if t.loaded && fi.ModTime().Equal(t.modTime) && fi.Size() == t.size {
		return t.sum, nil
	}
	b, err := os.ReadFile(t.Path)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("read token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return [sha256.Size]byte{}, fmt.Errorf("token file %s is empty", t.Path)
	}
	t.sum = sha256.Sum256([]byte(tok))
	t.modTime, t.size, t.loaded = fi.ModTime(), fi.Size(), true
	return t.sum, nil
}
