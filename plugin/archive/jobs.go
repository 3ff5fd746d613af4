package archive

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Jobs runs one upload per driver in the background, at most a fixed
// number at once, however often the agent asks about its node: the request
// core starts an upload and answers while it runs, and takes its result
// on a later request. A result is kept until Forget; the core forgets it
// once the driver pod records the outcome.
type Jobs struct {
	sem chan struct{}
	mu  sync.Mutex
	m   map[types.UID]*job
}

type job struct {
	done chan struct{}
	err  error
}

// NewJobs returns Jobs running at most concurrency uploads at once.
func NewJobs(concurrency int) *Jobs {
	return &Jobs{sem: make(chan struct{}, max(1, concurrency)), m: map[types.UID]*job{}}
}

// Start starts run for the driver unless it was started already, and
// reports whether it finished and how. run gets a context that ends when
// ctx does (the process's, not a request's).
func (j *Jobs) Start(ctx context.Context, driver types.UID, run func(context.Context) error) (done bool, err error) {
	j.mu.Lock()
	jb, ok := j.m[driver]
	if !ok {
		jb = &job{done: make(chan struct{})}
		j.m[driver] = jb
		go func() {
			defer close(jb.done)
			select {
			case j.sem <- struct{}{}:
			case <-ctx.Done():
				jb.err = ctx.Err()
				return
			}
			defer func() { <-j.sem }()
			jb.err = run(ctx)
		}()
	}
	j.mu.Unlock()
	select {
	case <-jb.done:
		return true, jb.err
	default:
		return false, nil
	}
}

// Wait blocks until the driver's upload, if one was started, finished.
func (j *Jobs) Wait(driver types.UID) {
	j.mu.Lock()
	jb, ok := j.m[driver]
	j.mu.Unlock()
	if ok {
		<-jb.done
	}
}

// Forget drops a finished upload's result; a later Start runs it again.
func (j *Jobs) Forget(driver types.UID) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if jb, ok := j.m[driver]; ok {
		select {
		case <-jb.done:
			delete(j.m, driver)
		default:
		}
	}
}
