package faults

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"math/big"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// The kinds of fault, as keys of Counts.
const (
	Latency      = "latency"
	ServerError  = "server-error"
	TooMany      = "too-many"
	Reset        = "reset"
	LostResponse = "lost-response"
	Timeout      = "timeout"
	WatchCut     = "watch-cut"
	// Requests counts every request the proxy received, faulted or not.
	Requests = "requests"
)

// Defaults of the durations of Options left zero.
const (
	DefaultTimeoutMax  = 70 * time.Second
	DefaultWatchCutMin = 1 * time.Second
	DefaultWatchCutMax = 10 * time.Second
)

// Options configure a Proxy. Rates are per eligible request, each in [0,1];
// zero disables that fault.
type Options struct {
	// Upstream is the API server, https://127.0.0.1:port. Its certificate
	// is not verified.
	Upstream string
	// Seed seeds the generator faults are drawn from.
	Seed int64
	// Enabled is the state the proxy starts in (see SetEnabled).
	Enabled bool

	// Latency delays a request by LatencyMin..LatencyMax before forwarding
	// it. LatencyMax must be set when Latency is.
	Latency                float64
	LatencyMin, LatencyMax time.Duration
	// ServerError answers 500, 503 or 504 with a Status body.
	ServerError float64
	// TooMany answers 429 with Retry-After: 1 and a Status body.
	TooMany float64
	// Reset resets the client's connection.
	Reset float64
	// LostResponse forwards a mutating request (POST, PUT, PATCH, DELETE),
	// then resets the client's connection instead of answering.
	LostResponse float64
	// Timeout holds a request until the client gives up or TimeoutMax
	// (zero: DefaultTimeoutMax) passes, then drops the connection.
	Timeout    float64
	TimeoutMax time.Duration
	// WatchCut forwards a watch request (?watch=true or watch=1) and cuts
	// its stream after WatchCutMin..WatchCutMax (zero: DefaultWatchCutMin,
	// DefaultWatchCutMax).
	WatchCut                 float64
	WatchCutMin, WatchCutMax time.Duration

	// Filter, if set, says which requests may get faults; the others pass
	// untouched and draw nothing. It must not read the body.
	Filter func(*http.Request) bool
	// Log, if set, gets one line per injected fault.
	Log *slog.Logger
}

// Proxy is a running fault-injecting proxy. Its methods are safe for
// concurrent use.
type Proxy struct {
	opts      Options
	url       string
	srv       *http.Server
	transport *http.Transport
	rp        *httputil.ReverseProxy
	enabled   atomic.Bool
	served    chan struct{} // closed when Serve returns

	// ctx ends on Close; every handler's context ends with it.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	rnd      *rand.Rand
	counts   map[string]int
	closed   bool
	handlers sync.WaitGroup
}

// Start validates opts and starts a proxy on 127.0.0.1 on a free port.
func Start(opts Options) (*Proxy, error) {
	upstream, err := validate(&opts)
	if err != nil {
		return nil, err
	}
	cert, err := selfSigned()
	if err != nil {
		return nil, err
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faults: listen: %w", err)
	}
	// TLS, because client-go sends no credentials over plain HTTP. HTTP/1.1
	// only: a fault resets one request's connection, not a shared stream.
	ln := tls.NewListener(tcp, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12})
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed test cluster on loopback
	errorLog := log.New(io.Discard, "", 0)
	if opts.Log != nil {
		errorLog = slog.NewLogLogger(opts.Log.Handler(), slog.LevelDebug)
	}
	p := &Proxy{
		opts:      opts,
		url:       "https://" + ln.Addr().String(),
		transport: transport,
		served:    make(chan struct{}),
		rnd:       rand.New(rand.NewPCG(uint64(opts.Seed), 0)), // replayable, not secret
		counts:    map[string]int{},
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
		},
		Transport:     transport,
		FlushInterval: -1,
		ErrorLog:      errorLog,
	}
	p.enabled.Store(opts.Enabled)
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          errorLog,
	}
	go func() {
		defer close(p.served)
		_ = p.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return p, nil
}

func validate(opts *Options) (*url.URL, error) {
	upstream, err := url.Parse(opts.Upstream)
	if err != nil {
		return nil, fmt.Errorf("faults: upstream: %w", err)
	}
	if (upstream.Scheme != "https" && upstream.Scheme != "http") || upstream.Host == "" {
		return nil, fmt.Errorf("faults: upstream %q is not an http(s)://host:port URL", opts.Upstream)
	}
	rates := map[string]float64{
		Latency: opts.Latency, ServerError: opts.ServerError, TooMany: opts.TooMany,
		Reset: opts.Reset, LostResponse: opts.LostResponse, Timeout: opts.Timeout,
		WatchCut: opts.WatchCut,
	}
	for kind, rate := range rates {
		if math.IsNaN(rate) || rate < 0 || rate > 1 {
			return nil, fmt.Errorf("faults: rate of %s is %v, not in [0,1]", kind, rate)
		}
	}
	if opts.Latency > 0 && opts.LatencyMax <= 0 {
		return nil, errors.New("faults: Latency needs LatencyMax")
	}
	if opts.LatencyMin < 0 || opts.LatencyMax < opts.LatencyMin {
		return nil, fmt.Errorf("faults: latency range %v..%v is empty", opts.LatencyMin, opts.LatencyMax)
	}
	if opts.TimeoutMax == 0 {
		opts.TimeoutMax = DefaultTimeoutMax
	}
	if opts.WatchCutMin == 0 {
		opts.WatchCutMin = DefaultWatchCutMin
	}
	if opts.WatchCutMax == 0 {
		opts.WatchCutMax = DefaultWatchCutMax
	}
	if opts.TimeoutMax < 0 {
		return nil, fmt.Errorf("faults: TimeoutMax %v is negative", opts.TimeoutMax)
	}
	if opts.WatchCutMin < 0 || opts.WatchCutMax < opts.WatchCutMin {
		return nil, fmt.Errorf("faults: watch cut range %v..%v is empty", opts.WatchCutMin, opts.WatchCutMax)
	}
	return upstream, nil
}

// URL is the proxy's address, https://127.0.0.1:port.
func (p *Proxy) URL() string { return p.url }

// SetEnabled turns fault injection on or off. While off, every request
// passes untouched and draws nothing; requests already holding a fault
// keep it.
func (p *Proxy) SetEnabled(on bool) { p.enabled.Store(on) }

// Counts returns how many faults of each kind were injected, and under
// Requests how many requests were received.
func (p *Proxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// Close stops the proxy: it stops listening, releases held requests, cuts
// streams, closes connections, and returns once every handler has
// returned. Closing twice is a no-op.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()

	p.cancel()
	err := p.srv.Close()
	p.handlers.Wait()
	<-p.served
	p.transport.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("faults: close: %w", err)
	}
	return nil
}

// ServeHTTP draws the request's fault, if it is eligible, and serves it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	eligible := p.enabled.Load() && (p.opts.Filter == nil || p.opts.Filter(r))
	f, ok := p.begin(r, eligible)
	if !ok {
		resetConn(w)
		return
	}
	defer p.handlers.Done()

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(p.ctx, cancel)
	defer stop()
	p.serve(w, r.WithContext(ctx), f)
}

// begin registers a handler and draws its fault. It reports false once the
// proxy is closed.
func (p *Proxy) begin(r *http.Request, eligible bool) (fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fault{}, false
	}
	p.handlers.Add(1)
	p.counts[Requests]++
	if !eligible {
		return fault{}, true
	}
	// Two draws per eligible request, whatever the outcome, so that the
	// sequence stays aligned across runs.
	u, v := p.rnd.Float64(), p.rnd.Float64()
	f := fault{kind: choose(&p.opts, r, u), v: v}
	if f.kind != "" {
		p.counts[f.kind]++
	}
	return f, true
}

// selfSigned is a certificate for 127.0.0.1, made for one proxy's life;
// clients skip verifying it, as they do the test API server's.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("faults: key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "sparkplug e2e fault proxy"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("faults: certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
