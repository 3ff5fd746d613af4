//go:build e2e

package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// StartRegistry serves an in-memory OCI registry (go-containerregistry's
// pkg/registry) on 127.0.0.1 until stop is called or ctx is done. host is
// its HOST:PORT: push to and pull from host/REPOSITORY:TAG over plain
// HTTP (containerd: a hosts.toml for host with plain-http server
// http://host). Its content is lost when it stops.
func StartRegistry(ctx context.Context) (host string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("registry: %w", err)
	}
	srv := &http.Server{
		Handler:           registry.New(registry.Logger(log.New(io.Discard, "", 0))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("registry on %s: %v", ln.Addr(), err)
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		<-ctx.Done()
		shutdown, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = srv.Shutdown(shutdown)
	}()
	return ln.Addr().String(), func() { cancel(); <-done }, nil
}
