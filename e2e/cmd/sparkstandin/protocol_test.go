package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// startDriver serves registrations for application spark-1 on a loopback
// port, and points the executor env (an executor of application appID) at
// it.
func startDriver(t *testing.T, appID string) *driver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	d := &driver{conf: map[string]string{spark.ConfAppID: "spark-1"}, log: slog.New(slog.NewTextHandler(io.Discard, nil)), registered: map[string]net.Conn{}, changed: make(chan struct{})}
	go d.accept(ln)
	t.Setenv("SPARK_DRIVER_URL", "spark://CoarseGrainedScheduler@"+ln.Addr().String())
	t.Setenv("SPARK_EXECUTOR_ID", "1")
	t.Setenv("SPARK_APPLICATION_ID", appID)
	return d
}

func startExecutor() <-chan int {
	code := make(chan int, 1)
	go func() {
		code <- runExecutor(context.Background(), os.Getenv, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	return code
}

func exitCode(t *testing.T, code <-chan int) int {
	t.Helper()
	select {
	case c := <-code:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("the executor did not exit")
		return -1
	}
}

// An executor registers, and exits 0 when the driver stops it, as Spark's
// do on StopExecutor.
func TestExecutorRegistersAndStops(t *testing.T) {
	d := startDriver(t, "spark-1")
	code := startExecutor()
	if n := d.waitForExecutors(context.Background(), func(n int) bool { return n == 1 }, 10*time.Second); n != 1 {
		t.Fatalf("%d executors registered, want 1", n)
	}
	d.stopExecutors()
	if c := exitCode(t, code); c != 0 {
		t.Errorf("exit code %d, want 0", c)
	}
}

// An executor of another application is refused, and fails.
func TestExecutorOfAnotherApplicationIsRefused(t *testing.T) {
	d := startDriver(t, "spark-2")
	code := startExecutor()
	if c := exitCode(t, code); c != 1 {
		t.Errorf("exit code %d, want 1", c)
	}
	if n := len(d.registered); n != 0 {
		t.Errorf("%d registered", n)
	}
}

// An executor whose driver goes away without stopping it fails, as
// Spark's do ("Driver disassociated").
func TestExecutorFailsWhenTheDriverGoes(t *testing.T) {
	d := startDriver(t, "spark-1")
	code := startExecutor()
	d.waitForExecutors(context.Background(), func(n int) bool { return n == 1 }, 10*time.Second)
	d.mu.Lock()
	for _, conn := range d.registered {
		conn.Close()
	}
	d.mu.Unlock()
	if c := exitCode(t, code); c != 1 {
		t.Errorf("exit code %d, want 1", c)
	}
}
