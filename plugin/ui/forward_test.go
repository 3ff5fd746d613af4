package ui

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/httpstream"
	spdystream "k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// kubelet is what a kubelet answers to a port-forward, which the API
// server passes on to it: the SPDY upgrade of the portforward.k8s.io
// protocol, then for each connection an error stream and a data stream
// whose port header names the pod's port. The data goes to backend (the
// driver's UI, here a local HTTP server), whatever the port; the ports
// asked for are sent on ports. Closing lose closes the stream's
// connection, as a kubelet or API server that goes away does.
func kubelet(t *testing.T, backend string, ports chan<- string, lose <-chan struct{}) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := httpstream.Handshake(r, w, []string{portforward.PortForwardProtocolV1Name}); err != nil {
			return
		}
		streams := make(chan httpstream.Stream, 4)
		conn := spdystream.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
			streams <- s
			return nil
		})
		if conn == nil {
			return
		}
		defer conn.Close()
		for {
			select {
			case s := <-streams:
				switch s.Headers().Get("streamType") {
				case "error":
					s.Close() // no error: the client reads its end
				case "data":
					ports <- s.Headers().Get("port")
					go pipe(s, backend)
				}
			case <-conn.CloseChan():
				return
			case <-lose:
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func pipe(s httpstream.Stream, backend string) {
	defer s.Close()
	c, err := net.Dial("tcp", backend)
	if err != nil {
		return
	}
	defer c.Close()
	go func() { _, _ = io.Copy(c, s) }()
	_, _ = io.Copy(s, c)
}

func dialerTo(t *testing.T, srv *httptest.Server) httpstream.Dialer {
	t.Helper()
	transport, upgrader, err := spdy.RoundTripperFor(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(srv.URL + "/api/v1/namespaces/jobs/pods/driver/portforward")
	if err != nil {
		t.Fatal(err)
	}
	return spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
}

// Forward listens on the address and port asked for (here any free
// one), says where, and passes each connection to the pod's UI port
// through the port-forward stream, until its context ends.
func TestForwardReachesTheUI(t *testing.T) {
	ui := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "Spark Jobs")
	}))
	defer ui.Close()
	ports := make(chan string, 4)
	srv := kubelet(t, ui.Listener.Addr().String(), ports, nil)
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan []string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Forward(ctx, dialerTo(t, srv), []string{"127.0.0.1"}, 0, 4041, func(u []string) { urls <- u }, nil)
	}()
	var got []string
	select {
	case got = <-urls:
	case err := <-done:
		t.Fatalf("Forward ended before it listened: %v", err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "http://127.0.0.1:") || strings.HasSuffix(got[0], ":0") {
		t.Fatalf("urls %q, want one on 127.0.0.1 and a port", got)
	}
	resp, err := http.Get(got[0] + "/jobs/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "Spark Jobs" {
		t.Errorf("through the forward: %q, want the UI's page", body)
	}
	if port := <-ports; port != "4041" {
		t.Errorf("the stream asked for port %s of the pod, want 4041 (its UI port)", port)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Forward after its context ended: %v, want nil", err)
	}
}

// A port-forward stream that is lost ends Forward with an error.
func TestForwardEndsWhenTheStreamIsLost(t *testing.T) {
	lose := make(chan struct{})
	srv := kubelet(t, "127.0.0.1:1", make(chan string, 4), lose)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Forward(context.Background(), dialerTo(t, srv), []string{"127.0.0.1"}, 0, 4040, func([]string) { close(ready) }, nil)
	}()
	<-ready
	close(lose)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "lost the connection to the driver") {
			t.Errorf("Forward: %v, want the connection lost", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Forward did not end when its stream was lost")
	}
}

// A local port already taken fails Forward, naming the port.
func TestForwardFailsOnAPortTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	srv := kubelet(t, "127.0.0.1:1", make(chan string, 4), nil)
	err = Forward(context.Background(), dialerTo(t, srv), []string{"127.0.0.1"}, port, 4040, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "unable to listen on any of the requested ports") {
		t.Errorf("Forward on a port taken: %v", err)
	}
}
