package faults

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fault is what one request drew: its kind ("" for none) and v, a uniform
// draw in [0,1) that picks the fault's parameter (delay, status code).
type fault struct {
	kind string
	v    float64
}

// serverErrorCode picks the answer of a server-error fault from the draw v
// in [0,1): 500, 503 or 504, a third of the time each.
func serverErrorCode(v float64) int {
	switch int(v * 3) {
	case 0:
		return http.StatusInternalServerError
	case 1:
		return http.StatusServiceUnavailable
	default:
		return http.StatusGatewayTimeout
	}
}

// choose maps the draw u in [0,1) to the fault of r, or "" for none: the
// rates that apply to r, scaled down if they add up to more than 1, are
// laid end to end in a fixed order and u falls in one of them or past all.
func choose(o *Options, r *http.Request, u float64) string {
	type rate struct {
		kind string
		p    float64
	}
	rates := []rate{
		{Latency, o.Latency},
		{ServerError, o.ServerError},
		{TooMany, o.TooMany},
		{Reset, o.Reset},
		{LostResponse, 0},
		{Timeout, o.Timeout},
		{WatchCut, 0},
	}
	if isMutating(r) {
		rates[4].p = o.LostResponse
	}
	if isWatch(r) {
		rates[6].p = o.WatchCut
	}
	sum := 0.0
	last := ""
	for _, x := range rates {
		sum += x.p
		if x.p > 0 {
			last = x.kind
		}
	}
	scale := 1.0
	if sum > 1 {
		scale = 1 / sum
	}
	acc := 0.0
	for _, x := range rates {
		acc += x.p * scale
		if x.p > 0 && u < acc {
			return x.kind
		}
	}
	if sum >= 1 {
		return last // rounding: rates adding up to 1 leave nothing past them
	}
	return ""
}

func isMutating(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// isWatch reports whether r asks for a watch: ?watch=true or watch=1.
func isWatch(r *http.Request) bool {
	w, err := strconv.ParseBool(r.URL.Query().Get("watch"))
	return err == nil && w
}

// between returns lo + v*(hi-lo).
func between(lo, hi time.Duration, v float64) time.Duration {
	return lo + time.Duration(v*float64(hi-lo))
}

// serve serves r with its fault f. r's context ends when the client goes
// away or the proxy is closed.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, f fault) {
	o := &p.opts
	switch f.kind {
	case "":
		p.forward(w, r)
	case Latency:
		d := between(o.LatencyMin, o.LatencyMax, f.v)
		p.logFault(r, f.kind, "delay", d)
		if !sleep(r.Context(), d) {
			resetConn(w)
			return
		}
		p.forward(w, r)
	case ServerError:
		code := serverErrorCode(f.v)
		p.logFault(r, f.kind, "status", code)
		writeStatus(w, code, 0)
	case TooMany:
		p.logFault(r, f.kind)
		writeStatus(w, http.StatusTooManyRequests, 1)
	case Reset:
		p.logFault(r, f.kind)
		resetConn(w)
	case LostResponse:
		p.logFault(r, f.kind)
		p.forwardAndDiscard(r)
		resetConn(w)
	case Timeout:
		p.logFault(r, f.kind, "max", o.TimeoutMax)
		// The server notices that the client went away only once the
		// body has been read; it is discarded as it comes.
		_, _ = io.Copy(io.Discard, r.Body)
		sleep(r.Context(), o.TimeoutMax)
		resetConn(w)
	case WatchCut:
		d := between(o.WatchCutMin, o.WatchCutMax, f.v)
		p.logFault(r, f.kind, "after", d)
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		p.forward(w, r.WithContext(ctx))
	}
}

// forward sends r upstream and streams the answer back. An answer cut short
// because r's context ended (a watch cut, Close) must not end cleanly, or
// the client would take it for the server's own end of a watch: the
// connection is reset. (The reverse proxy aborts the connection itself
// when it sees the read error, but the upstream body may also report a
// plain end of stream once the request is canceled.)
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	p.rp.ServeHTTP(w, r)
	if r.Context().Err() != nil {
		resetConn(w)
	}
}

func (p *Proxy) logFault(r *http.Request, kind string, attrs ...any) {
	if p.opts.Log == nil {
		return
	}
	args := append([]any{"fault", kind, "method", r.Method, "path", r.URL.Path}, attrs...)
	p.opts.Log.Info("fault injected", args...)
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// forwardAndDiscard sends r upstream and throws the answer away.
func (p *Proxy) forwardAndDiscard(r *http.Request) {
	defer func() {
		// A stream that broke mid-way: the answer is lost either way.
		if v := recover(); v != nil && v != http.ErrAbortHandler {
			panic(v)
		}
	}()
	p.rp.ServeHTTP(&discardWriter{header: http.Header{}}, r)
}

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ header http.Header }

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

// resetConn closes the client's connection abruptly: with SO_LINGER 0 the
// kernel sends a RST, so the client reads "connection reset by peer"
// rather than a clean end of stream.
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // the server closes the connection
	}
	raw := conn
	if tc, ok := conn.(*tls.Conn); ok {
		raw = tc.NetConn()
	}
	if tc, ok := raw.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// writeStatus answers code with a Kubernetes Status body, as the API
// server would; retryAfter > 0 also sets Retry-After (seconds).
func writeStatus(w http.ResponseWriter, code int, retryAfter int32) {
	reason, message := metav1.StatusReasonInternalError, "an error on the server (injected fault) has prevented the request from succeeding"
	switch code {
	case http.StatusServiceUnavailable:
		reason, message = metav1.StatusReasonServiceUnavailable, "the server is currently unable to handle the request (injected fault)"
	case http.StatusGatewayTimeout:
		reason, message = metav1.StatusReasonTimeout, "the server was unable to return a response in the time allotted (injected fault)"
	case http.StatusTooManyRequests:
		reason, message = metav1.StatusReasonTooManyRequests, "too many requests (injected fault), please try again later"
	}
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  message,
		Reason:   reason,
		Code:     int32(code),
	}
	if retryAfter > 0 {
		st.Details = &metav1.StatusDetails{RetryAfterSeconds: retryAfter}
		w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter)))
	}
	body, err := json.Marshal(st)
	if err != nil { // cannot happen: a plain struct
		http.Error(w, message, code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
