package sparkapi

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// Defaults of TrackerOptions.
const (
	// DefaultRefresh is how old a progress text may be before Get starts a
	// refresh. The Argo agent writes node results at most every 10 s
	// (ARGO_AGENT_PATCH_RATE), so fresher text would mostly go unseen.
	DefaultRefresh = 10 * time.Second
	// DefaultExpire drops an entry no Get asked for in this long: a driver
	// whose node is no longer asked about has ended or moved on.
	DefaultExpire = 10 * time.Minute
	// DefaultMaxEntries caps the entries kept; past it the least recently
	// asked is dropped.
	DefaultMaxEntries = 10000
	// DefaultMaxRefreshes caps the refreshes in flight, for all keys.
	DefaultMaxRefreshes = 4
)

// TrackerOptions tune a Tracker. Zero fields take the defaults above.
type TrackerOptions struct {
	Refresh      time.Duration
	Expire       time.Duration
	MaxEntries   int
	MaxRefreshes int
}

// Tracker keeps the last progress text of each running driver and refreshes
// it in the background, so that the request path never waits on Spark. It
// is safe for concurrent use.
type Tracker struct {
	client  *Client
	refresh time.Duration
	expire  time.Duration
	maxLen  int
	slots   chan struct{} // a token per refresh in flight, MaxRefreshes in all
	now     func() time.Time

	mu sync.Mutex
	// entries maps a key to its element in lru, whose front is the most
	// recently asked.
	entries map[string]*list.Element
	lru     *list.List
	// inFlight marks the keys with a refresh under way. It is apart from
	// entries so that a key forgotten and asked for again while its old
	// refresh runs still has one refresh at a time.
	inFlight map[string]bool
	// running counts the refreshes under way, for tests to wait on.
	running sync.WaitGroup
}

type entry struct {
	key, baseURL, appID string
	text                string
	// ok is whether Spark's API answered the last refresh.
	ok bool
	// checked is when the last refresh ended, zero before the first.
	checked time.Time
	// asked is when Get last asked for the key.
	asked time.Time
}

// NewTracker returns a Tracker reading through c (NewClient(0) when nil).
func NewTracker(c *Client, o TrackerOptions) *Tracker {
	if c == nil {
		c = NewClient(0)
	}
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.Expire <= 0 {
		o.Expire = DefaultExpire
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.MaxRefreshes <= 0 {
		o.MaxRefreshes = DefaultMaxRefreshes
	}
	return &Tracker{
		client:   c,
		refresh:  o.Refresh,
		expire:   o.Expire,
		maxLen:   o.MaxEntries,
		slots:    make(chan struct{}, o.MaxRefreshes),
		now:      time.Now,
		entries:  map[string]*list.Element{},
		lru:      list.New(),
		inFlight: map[string]bool{},
	}
}

// Get returns the last progress text known for key at once, never waiting
// on Spark: "" until the first refresh has answered, while no job runs,
// and whenever the last refresh failed. ok is whether Spark's API answered
// the last refresh (so "" with ok means no job is running). When the text
// is older than the refresh interval, Get starts a background refresh of
// key from baseURL and appID, unless one is already under way for key or
// MaxRefreshes are under way in all; a later Get tries again. A key asked
// for with another baseURL or appID than before (a new driver under the
// same key) starts afresh.
func (t *Tracker) Get(key, baseURL, appID string) (text string, ok bool) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked(now)
	e := t.entryLocked(key, baseURL, appID)
	e.asked = now
	if !t.inFlight[key] && (e.checked.IsZero() || now.Sub(e.checked) >= t.refresh) {
		select {
		case t.slots <- struct{}{}:
			t.inFlight[key] = true
			t.running.Add(1)
			go t.refreshKey(e)
		default:
		}
	}
	return e.text, e.ok
}

// Forget drops key, when its driver has ended. A refresh under way for it
// ends by the client's timeout and its answer is thrown away.
func (t *Tracker) Forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if el, found := t.entries[key]; found {
		t.lru.Remove(el)
		delete(t.entries, key)
	}
}

// entryLocked returns key's entry, moved to the front of lru, making it
// (and room for it) when key is new and resetting it when it names another
// driver.
func (t *Tracker) entryLocked(key, baseURL, appID string) *entry {
	if el, found := t.entries[key]; found {
		t.lru.MoveToFront(el)
		e := el.Value.(*entry)
		if e.baseURL != baseURL || e.appID != appID {
			// A new entry, so that a refresh of the old driver still
			// under way writes into the old one, which nothing reads.
			e = &entry{key: key, baseURL: baseURL, appID: appID}
			el.Value = e
		}
		return e
	}
	for t.lru.Len() >= t.maxLen {
		t.removeLocked(t.lru.Back())
	}
	e := &entry{key: key, baseURL: baseURL, appID: appID}
	t.entries[key] = t.lru.PushFront(e)
	return e
}

// expireLocked drops the entries not asked for within the expiry, from the
// least recently asked; each Get pays only for what it drops.
func (t *Tracker) expireLocked(now time.Time) {
	for el := t.lru.Back(); el != nil; el = t.lru.Back() {
		if now.Sub(el.Value.(*entry).asked) < t.expire {
			return
		}
		t.removeLocked(el)
	}
}

func (t *Tracker) removeLocked(el *list.Element) {
	delete(t.entries, el.Value.(*entry).key)
	t.lru.Remove(el)
}

// refreshKey asks Spark for e's progress and records it in e. It holds
// the slot Get took for it.
func (t *Tracker) refreshKey(e *entry) {
	defer t.running.Done()
	p, err := t.client.Progress(context.Background(), e.baseURL, e.appID)
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.inFlight, e.key)
	<-t.slots
	// e may be forgotten or replaced by now; then nothing reads it again.
	e.checked = now
	e.text, e.ok = "", false
	if err == nil {
		e.text, e.ok = p.String(), true
	}
}
