package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
)

// serve runs edge.HTTPServer(h, l) on a loopback port until the test ends and
// returns its address.
func serve(t *testing.T, h http.Handler, l edge.Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := edge.HTTPServer(h, l)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// closedWithin reads from conn until the server closes it, and fails the
// test unless that happens after at least min and within max.
func closedWithin(t *testing.T, conn net.Conn, min, max time.Duration) {
	t.Helper()
	start := time.Now()
	if err := conn.SetReadDeadline(start.Add(max)); err != nil {
		t.Fatal(err)
	}
	_, err := io.Copy(io.Discard, conn)
	took := time.Since(start)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection is still open after %s", max)
	}
	if took < min {
		t.Fatalf("the connection was closed after %s, before %s", took, min)
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func engine(t *testing.T, core *fakeCore) http.Handler {
	return New(core, tokenFile(t, "tok"), readyFunc(func() error { return nil }), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// A client that sends the headers of a template.execute and never its
// body holds the connection no longer than the read timeout, and the core
// never sees the request. Without a read timeout Go waits for the body
// forever.
func TestAStalledBodyIsCutOffAtTheReadTimeout(t *testing.T) {
	core := &fakeCore{}
	const readTimeout = 300 * time.Millisecond
	addr := serve(t, engine(t, core), edge.Limits{ReadTimeout: readTimeout})
	conn := dial(t, addr)
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer tok\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"workflow\":", edge.ExecutePath)
	closedWithin(t, conn, readTimeout-50*time.Millisecond, 3*time.Second)
	if core.calls != 0 {
		t.Fatalf("the core was called %d times with a body that never came", core.calls)
	}
}

// A header block over MaxHeaderBytes is refused with 431 before any
// handler runs; the agent's headers, a bearer token of a few KiB, pass.
func TestAnOversizeHeaderBlockIs431(t *testing.T) {
	core := &fakeCore{}
	addr := serve(t, engine(t, core), edge.Limits{})
	post := func(pad int) int {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+edge.ExecutePath, strings.NewReader(validBody))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("X-Pad", strings.Repeat("a", pad))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(4 << 10); code != http.StatusOK {
		t.Fatalf("a 4 KiB header: %d, want 200", code)
	}
	if code := post(edge.DefaultLimits().MaxHeaderBytes + 8<<10); code != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a header of MaxHeaderBytes + 8 KiB: %d, want 431", code)
	}
	if core.calls != 1 {
		t.Fatalf("the core was called %d times, want once (the 4 KiB header)", core.calls)
	}
}

// A kept-alive connection that carries no further request is closed after
// the idle timeout (and not after the longer read timeout, which Go would
// use without one).
func TestAnIdleKeepAliveConnectionIsClosed(t *testing.T) {
	const idle = 300 * time.Millisecond
	addr := serve(t, engine(t, &fakeCore{}), edge.Limits{IdleTimeout: idle, ReadTimeout: time.Minute})
	conn := dial(t, addr)
	fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close || string(body) != "ok" {
		t.Fatalf("GET /healthz: %d %q (close %v), want 200 ok on a kept-alive connection", resp.StatusCode, body, resp.Close)
	}
	closedWithin(t, conn, idle-50*time.Millisecond, 3*time.Second)
}

// A body over edge.MaxBodyBytes is answered 413 and never reaches the core; one
// of exactly edge.MaxBodyBytes is read whole (a body of junk that size is
// answered, the README says, see spec's BenchmarkParse4MiB).
func TestABodyOverMaxBodyBytesIs413(t *testing.T) {
	core := &fakeCore{}
	addr := serve(t, engine(t, core), edge.Limits{})
	post := func(size int) (int, string) {
		// validBody with its template name padded to size bytes.
		pad := size - len(validBody)
		body := strings.Replace(validBody, `"name":"t"`, `"name":"t`+strings.Repeat("x", pad)+`"`, 1)
		if len(body) != size {
			t.Fatalf("built a %d-byte body, want %d", len(body), size)
		}
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+edge.ExecutePath, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(edge.MaxBodyBytes); code != http.StatusOK || core.calls != 1 {
		t.Fatalf("a body of edge.MaxBodyBytes: %d %s, core called %d times; want 200 and one call", code, body, core.calls)
	}
	if code, body := post(edge.MaxBodyBytes + 1); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "request body over 4194304 bytes") {
		t.Fatalf("a body of edge.MaxBodyBytes+1: %d %s, want 413 naming the cap", code, body)
	}
	if core.calls != 1 {
		t.Fatalf("the core was called %d times, want once", core.calls)
	}
}

// Every server sparkplug makes takes its limits from edge.HTTPServer; a zero
// field takes the default.
func TestHTTPServerFillsTheDefaults(t *testing.T) {
	d := edge.DefaultLimits()
	s := edge.HTTPServer(http.NotFoundHandler(), edge.Limits{IdleTimeout: time.Second})
	if s.ReadTimeout != d.ReadTimeout || s.ReadHeaderTimeout != d.ReadTimeout || s.WriteTimeout != d.WriteTimeout ||
		s.IdleTimeout != time.Second || s.MaxHeaderBytes != d.MaxHeaderBytes {
		t.Fatalf("server limits read %s header %s write %s idle %s headers %d", s.ReadTimeout, s.ReadHeaderTimeout, s.WriteTimeout, s.IdleTimeout, s.MaxHeaderBytes)
	}
	if d.WriteTimeout <= edge.AgentTimeout || d.IdleTimeout <= 90*time.Second || d.ReadTimeout >= edge.AgentTimeout {
		t.Fatalf("defaults %+v: writes must outlast the agent's %s, idle connections its client's 90 s", d, edge.AgentTimeout)
	}
}
