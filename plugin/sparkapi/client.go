package sparkapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const (
	// DefaultTimeout bounds one call of Client.Progress, from dialling to
	// the last byte of the reply. A driver whose UI takes longer is busy
	// enough that its progress can wait for the next refresh.
	DefaultTimeout = 500 * time.Millisecond
	// MaxBody is the most of a reply that is read. A running-jobs list is
	// a few KiB (each job about 500 bytes); anything larger is not the
	// reply asked for, or an application with far more concurrent jobs
	// than a message could show.
	MaxBody = 1 << 20
	// maxRedirects is how many same-host redirects are followed.
	maxRedirects = 3
)

// Client reads a running Spark application's progress from its driver's
// monitoring REST API (Spark's docs/monitoring.md, "REST API"). It is safe
// for concurrent use.
type Client struct {
	http    *http.Client
	timeout time.Duration
}

// NewClient returns a Client whose calls each take at most timeout
// (DefaultTimeout when timeout <= 0). It has its own transport: no proxy
// from the environment (the driver is reached inside the cluster, and a
// proxy would put another hop under the timeout), at most one idle
// connection per driver, and redirects followed only to the same host and
// port.
func NewClient(timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    1,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &Client{
		timeout: timeout,
		http: &http.Client{
			Transport:     tr,
			Timeout:       timeout,
			CheckRedirect: sameHost,
		},
	}
}

// Timeout is the bound of one call.
func (c *Client) Timeout() time.Duration { return c.timeout }

// sameHost follows a redirect only to the host and port of the first
// request, and only a few times: a driver's UI has no business sending
// the plugin elsewhere.
func sameHost(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return errors.New("too many redirects")
	}
	if req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
		return http.ErrUseLastResponse
	}
	return nil
}

// JobsURL is where the running jobs of appID are listed under the UI at
// baseURL: <baseURL>/api/v1/applications/<appID>/jobs?status=running. A
// live driver's UI answers only for its own spark.app.id.
func JobsURL(baseURL, appID string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("sparkapi: base URL must be http(s)://host[:port][/path]")
	}
	if appID == "" {
		return "", errors.New("sparkapi: no application id")
	}
	// RawPath keeps a "/" in appID one path segment (%2F).
	rawBase := strings.TrimRight(u.EscapedPath(), "/")
	u.Path = strings.TrimRight(u.Path, "/") + "/api/v1/applications/" + appID + "/jobs"
	u.RawPath = rawBase + "/api/v1/applications/" + url.PathEscape(appID) + "/jobs"
	u.RawQuery = "status=running"
	u.Fragment = ""
	return u.String(), nil
}

// Progress asks the UI at baseURL (for example http://<svc>.<ns>.svc:4040)
// for the running jobs of appID and returns the oldest one's progress. No
// running job is not an error: the Progress is zero and renders as "".
// Errors are one short line (timeout, refused, HTTP status, reply too
// large or not a job list); the reply's content never panics it.
func (c *Client) Progress(ctx context.Context, baseURL, appID string) (Progress, error) {
	target, err := JobsURL(baseURL, appID)
	if err != nil {
		return Progress{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	body, err := c.get(ctx, target)
	if err != nil {
		return Progress{}, err
	}
	var jobs []jobData
	if err := json.Unmarshal(body, &jobs); err != nil {
		return Progress{}, errors.New("sparkapi: reply is not a job list")
	}
	return progressOf(jobs), nil
}

// get reads the reply to a GET of target, at most MaxBody bytes, within
// ctx.
func (c *Client) get(ctx context.Context, target string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, errors.New("sparkapi: bad request URL")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.short(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("sparkapi: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return nil, c.short(ctx, err)
	}
	if len(body) > MaxBody {
		return nil, fmt.Errorf("sparkapi: reply over %d bytes", MaxBody)
	}
	return body, nil
}

// short turns a transport error into one line without the URL (which the
// caller knows): a timeout says so, other errors keep their innermost
// cause, cut to a sane length.
func (c *Client) short(ctx context.Context, err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded ||
		errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("sparkapi: no reply within %s", c.timeout)
	}
	if errors.Is(err, context.Canceled) {
		return errors.New("sparkapi: canceled")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	const maxMsg = 120
	if len(msg) > maxMsg {
		msg = msg[:maxMsg] + "..."
	}
	return errors.New("sparkapi: " + msg)
}
