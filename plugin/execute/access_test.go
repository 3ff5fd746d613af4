package execute

import (
	"testing"
	"time"
)

// A namespace's access review answers for accessReviewTTL, then is asked
// again; another namespace has its own.
func TestAccessReviewsAreKeptPerNamespaceForAWhile(t *testing.T) {
	var a accessReviews
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	if _, ok := a.get("jobs", now); ok {
		t.Fatal("an answer before any review")
	}
	a.set("jobs", "denied", now)
	if d, ok := a.get("jobs", now.Add(accessReviewTTL)); !ok || d != "denied" {
		t.Errorf("within the TTL: %q, %v", d, ok)
	}
	if _, ok := a.get("other", now); ok {
		t.Error("another namespace shares the answer")
	}
	if _, ok := a.get("jobs", now.Add(accessReviewTTL+time.Second)); ok {
		t.Error("an answer past its TTL")
	}
}
