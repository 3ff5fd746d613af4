package execute

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
)

// submissionFailures counts rejected driver submissions per attempt. It is
// the one piece of state kept only in memory: a failed submission leaves
// nothing in the cluster to write it on. A restarted plugin starts the
// count again, so a submission may be tried a few more times, never fewer.
type submissionFailures struct {
	mu sync.Mutex
	m  map[string]submissionFailure
}

type submissionFailure = decide.Failure

// failKey names one attempt of one node of a workflow.
func failKey(uid, node string, attempt int) string {
	return fmt.Sprintf("%s/%s/%d", uid, node, attempt)
}

// record counts one refused submission and returns the count so far.
func (s *submissionFailures) record(uid, node string, attempt int, message string, now time.Time) decide.Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := failKey(uid, node, attempt)
	f := s.m[k]
	f.Count++
	f.At, f.Message = now, message
	s.m[k] = f
	return f
}

// of copies the counts of one node's attempts, by attempt.
func (s *submissionFailures) of(uid, node string) map[int]decide.Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]decide.Failure{}
	prefix := uid + "/" + node + "/"
	for k, f := range s.m {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			if n, err := strconv.Atoi(rest); err == nil {
				out[n] = f
			}
		}
	}
	return out
}

// clear forgets an attempt's count once its launch went through.
func (s *submissionFailures) clear(uid, node string, attempt int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, failKey(uid, node, attempt))
}

// uidSet is a set of object uids, safe for concurrent use.
type uidSet struct {
	mu sync.Mutex
	m  map[types.UID]bool
}

func (s *uidSet) add(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[types.UID]bool{}
	}
	s.m[uid] = true
}

func (s *uidSet) has(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[uid]
}

// missingSince remembers when this process first missed a driver the
// TaskSet says exists, so "driver pod not found" waits out a grace period.
type missingSince struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (m *missingSince) since(key string, now time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.m[key]; ok {
		return t
	}
	m.m[key] = now
	return now
}

// forget drops the counts of every node of the workflow with uid.
func (s *submissionFailures) forget(uid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.m {
		if strings.HasPrefix(k, uid+"/") {
			delete(s.m, k)
		}
	}
}

// forget drops what is remembered of the workflow with uid's drivers.
func (m *missingSince) forget(uid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.m {
		if strings.HasPrefix(k, uid+"/") {
			delete(m.m, k)
		}
	}
}

// accessReviewTTL is how long a namespace's access review answers for.
const accessReviewTTL = time.Minute

// accessReviews are the access reviews' answers by namespace.
type accessReviews struct {
	mu sync.Mutex
	m  map[string]accessReview
}

type accessReview struct {
	denied string
	at     time.Time
}

func (a *accessReviews) get(namespace string, now time.Time) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.m[namespace]
	if !ok || now.Sub(r.at) > accessReviewTTL {
		return "", false
	}
	return r.denied, true
}

func (a *accessReviews) set(namespace, denied string, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string]accessReview{}
	}
	a.m[namespace] = accessReview{denied: denied, at: now}
}
