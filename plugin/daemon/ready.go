package daemon

import (
	"errors"
	"sync/atomic"
)

// Ready is a readiness that is set once: the API server answered
// (kube.WatchReadiness), or why not. /readyz serves it.
type Ready struct {
	err atomic.Pointer[error]
}

// Set records the readiness outcome; nil means ready.
func (r *Ready) Set(err error) { r.err.Store(&err) }

// Ready returns nil once Set(nil) was called.
func (r *Ready) Ready() error {
	p := r.err.Load()
	if p == nil {
		return errors.New("starting")
	}
	return *p
}
