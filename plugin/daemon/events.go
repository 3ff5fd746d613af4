package daemon

import (
	"context"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Events records Kubernetes Events as component, and can wait for the
// ones on their way (Flush) before the process exits.
type Events struct {
	broadcaster record.EventBroadcaster
	flushed     *flushedEvents
	recorder    record.EventRecorder
}

// NewEvents starts recording Events through kube. Its writes outlive
// any request context: a process's last Events (the drivers an ending
// workflow's sweep deleted) are recorded after SIGTERM; Shutdown ends
// them.
func NewEvents(kube kubernetes.Interface, component string) *Events {
	f := &flushedEvents{}
	b := record.NewBroadcaster(record.WithContext(context.Background()))
	b.StartRecordingToSink(f.sink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")}))
	return &Events{broadcaster: b, flushed: f,
		recorder: f.recorder(b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component}))}
}

// Recorder records the Events.
func (e *Events) Recorder() record.EventRecorder { return e.recorder }

// Flush waits until every Event recorded was written, at most flushWait
// or until ctx is done; it reports whether all were.
func (e *Events) Flush(ctx context.Context) bool { return e.flushed.flush(ctx) }

// Shutdown stops recording.
func (e *Events) Shutdown() { e.broadcaster.Shutdown() }

// flushedEvents counts the Events recorded and the writes of them that
// ended, so that shutdown can wait for the ones still on their way:
// client-go's broadcaster writes asynchronously and has no flush, and a
// sidecar's last Events (the drivers its ending workflow's sweep deleted)
// are recorded moments before the process exits.
type flushedEvents struct {
	recorded, written atomic.Int64
}

// flushWait is how long flush waits for a write it cannot see end: the
// broadcaster drops some Events on purpose (its spam filter), whose
// writes never come.
const flushWait = 5 * time.Second

// flush waits until every Event recorded was written (or one write of it
// ended in an error), at most flushWait or until ctx is done; it reports
// whether all were.
func (f *flushedEvents) flush(ctx context.Context) bool {
	deadline := time.NewTimer(flushWait)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for f.written.Load() < f.recorded.Load() {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

func (f *flushedEvents) recorder(r record.EventRecorder) record.EventRecorder {
	return countingRecorder{EventRecorder: r, n: &f.recorded}
}

func (f *flushedEvents) sink(s record.EventSink) record.EventSink {
	return countingSink{sink: s, n: &f.written}
}

// countingRecorder counts the Events recorded with Event, the one method
// sparkplug records with.
type countingRecorder struct {
	record.EventRecorder
	n *atomic.Int64
}

func (r countingRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.n.Add(1)
	r.EventRecorder.Event(object, eventtype, reason, message)
}

// countingSink counts the writes that ended.
type countingSink struct {
	sink record.EventSink
	n    *atomic.Int64
}

func (s countingSink) Create(e *corev1.Event) (*corev1.Event, error) {
	defer s.n.Add(1)
	return s.sink.Create(e)
}

func (s countingSink) Update(e *corev1.Event) (*corev1.Event, error) {
	defer s.n.Add(1)
	return s.sink.Update(e)
}

func (s countingSink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	defer s.n.Add(1)
	return s.sink.Patch(e, data)
}
