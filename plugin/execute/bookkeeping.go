package execute

import (
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// keyedMutex serialises requests for one (workflow, template key): the
// identity decision reads and writes the same runs.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedEntry{}
	}
	e := k.locks[key]
	if e == nil {
		e = &keyedEntry{}
		k.locks[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

// submissionFailures counts rejected driver submissions per attempt. It is
// the one piece of state kept only in memory: a failed submission leaves
// nothing in the cluster to write it on. A restarted plugin starts the
// count again, so a submission may be tried a few more times, never fewer.
type submissionFailures struct {
	mu sync.Mutex
	m  map[string]submissionFailure
}

type submissionFailure struct {
	count   int
	at      time.Time
	message string
}

func (s *submissionFailures) record(key, message string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.m[key]
	f.count++
	f.at, f.message = now, message
	s.m[key] = f
}

func (s *submissionFailures) get(key string) submissionFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key]
}

// of copies the counts of one workflow's attempts, by failKey.
func (s *submissionFailures) of(uid string) map[string]submissionFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]submissionFailure{}
	for k, f := range s.m {
		if rest, ok := strings.CutPrefix(k, uid+"/"); ok {
			out[rest] = f
		}
	}
	return out
}

func (s *submissionFailures) clear(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
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
