package sidecar

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
)

// unreachableKubeconfig names an API server nobody listens at: the
// requests the tests make never reach the core, so nothing calls it but
// the readiness probe, which keeps failing.
const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
`

// Both servers Run starts, the plugin's (Addr) and the metrics server
// (MetricsAddr), are made under Config.ServerLimits: each cuts off a
// client that stalls in its body, closes an idle kept-alive connection,
// and refuses an oversize header block.
func TestBothServersTakeTheLimits(t *testing.T) {
	dir := t.TempDir()
	kubeconfig, tokenFile := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "token")
	if err := os.WriteFile(kubeconfig, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenFile, []byte("tok"), 0o600); err != nil {
		t.Fatal(err)
	}
	const limit = 300 * time.Millisecond
	c := DefaultConfig()
	c.Addr, c.MetricsAddr, c.TokenFile, c.Kubeconfig = "127.0.0.1:0", freeLoopbackAddr(t), tokenFile, kubeconfig
	c.ShutdownGrace = time.Second
	c.ServerLimits = edge.Limits{ReadTimeout: limit, IdleTimeout: limit}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 1)
	c.Listening = func(addr string) { listening <- addr }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, c, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	var addr string
	select {
	case addr = <-listening:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the sidecar did not listen within 10s")
	}

	for _, s := range []struct{ name, addr, post, get string }{
		{"addr", addr, edge.ExecutePath, "/healthz"},
		{"metrics-addr", c.MetricsAddr, "/metrics", "/metrics"},
	} {
		t.Run(s.name, func(t *testing.T) {
			// Headers with a Content-Length, then the body never comes.
			conn := dialLoopback(t, s.addr)
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer tok\r\nContent-Length: 1000\r\n\r\n{", s.post)
			closedWithin(t, conn, limit-50*time.Millisecond, 3*time.Second)

			// One request, then the kept-alive connection sits idle.
			conn = dialLoopback(t, s.addr)
			fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", s.get)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Close {
				t.Fatalf("GET %s: %d (close %v), want 200 on a kept-alive connection", s.get, resp.StatusCode, resp.Close)
			}
			closedWithin(t, conn, limit-50*time.Millisecond, 3*time.Second)

			// A header block over the limit.
			req, err := http.NewRequest(http.MethodGet, "http://"+s.addr+s.get, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Pad", strings.Repeat("a", edge.DefaultLimits().MaxHeaderBytes+8<<10))
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
				t.Fatalf("an oversize header block: %d, want 431", resp.StatusCode)
			}
		})
	}
}

// freeLoopbackAddr is a loopback address no one listens at just now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func dialLoopback(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
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
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection is still open after %s", max)
	}
	if took := time.Since(start); took < min {
		t.Fatalf("the connection was closed after %s, before %s", took, min)
	}
}
