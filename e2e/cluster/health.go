package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// waitFor polls check until it returns nil, p exits, or ctx ends. Errors
// quote the end of p's log.
func (c *Cluster) waitFor(ctx context.Context, p *process, what string, check func(context.Context) error) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	var lastErr error
	for {
		if exited, exitErr := p.exited(); exited {
			return fmt.Errorf("%s exited while waiting for %s (%w); end of %s:\n%s",
				p.name, what, exitErr, p.logPath, p.logTail(logTailLines))
		}
		checkCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		lastErr = check(checkCtx)
		cancel()
		if lastErr == nil {
			p.note("### waited %v for %s", time.Since(start).Round(time.Millisecond), what)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out waiting for %s (last error: %v): %w; end of %s:\n%s",
				what, lastErr, ctx.Err(), p.logPath, p.logTail(logTailLines))
		case <-tick.C:
		}
	}
}

// insecureHTTP talks to the components' self-signed endpoints on loopback.
var insecureHTTP = &http.Client{
	Timeout:   2 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // self-signed, loopback only
}

// httpHealthy succeeds if GET url answers 200 and the body contains want.
func httpHealthy(ctx context.Context, url, token, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health request: %w", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := insecureHTTP.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return nil
}

// freePorts returns n distinct loopback ports that were free a moment ago.
// Listeners are held until all are picked, so the ports differ.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
