package daemon

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// slowSink writes an Event once released.
type slowSink struct{ release chan struct{} }

func (s slowSink) Create(e *corev1.Event) (*corev1.Event, error) { <-s.release; return e, nil }
func (s slowSink) Update(e *corev1.Event) (*corev1.Event, error) { <-s.release; return e, nil }
func (s slowSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	<-s.release
	return e, nil
}

// flush waits for the Events recorded and still being written, and says
// when they are all written.
func TestFlushWaitsForEventsOnTheirWay(t *testing.T) {
	f := &flushedEvents{}
	s := slowSink{release: make(chan struct{})}
	sink := f.sink(s)
	rec := f.recorder(record.NewFakeRecorder(1))
	rec.Event(&corev1.Pod{}, corev1.EventTypeNormal, "SparkDriverDeleted", "deleted")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if f.flush(ctx) {
		t.Fatal("flush said all Events were written while one was not")
	}
	go func() { _, _ = sink.Create(&corev1.Event{}) }()
	time.Sleep(10 * time.Millisecond)
	close(s.release)
	if !f.flush(context.Background()) {
		t.Fatal("flush did not see the Event written")
	}
}
