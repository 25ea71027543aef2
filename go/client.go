// SPDX-License-Identifier: MIT

// The client and its requests: base URLs tried in turn (the next one when
// nothing was sent, or on a 503; an acquire's request_id makes that safe), a
// deadline over the whole request, the monotonic instant just before the
// request was sent (what safe time counts from), and error answers turned
// into *Error.

package tenure

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Limits of the API (docs/API.md).
const (
	MaxURLs     = 8       // base URLs of one client
	NameMax     = 256     // bytes of a lease name
	OwnerMax    = 128     // bytes of an owner id
	TokenMax    = 1 << 53 // tokens are JSON integers below 2^53
	maxBodySize = 1 << 20 // bytes of an answer the client reads
)

// Options configure a Client.  Only URLs is required.
type Options struct {
	// URLs are the servers' base URLs ("http://127.0.0.1:7300"; "host:port"
	// alone means http://), 1 to MaxURLs.  A request goes to the one that
	// last answered and moves on when nothing was sent (no connection
	// could be made) or the server answered 503; since a 503 does not
	// prove that nothing was done, every acquire carries a request_id
	// (AcquireOptions.RequestID).
	URLs []string
	// OwnerID is the owner of acquires that name none; default "host:pid".
	OwnerID string
	// Bearer is sent as "Authorization: Bearer"; never logged.
	Bearer string
	// TLS configures https:// servers (nil: the system's roots).  Set
	// Certificates for a client certificate (mutual TLS).
	TLS *tls.Config
	// RequestTimeout bounds each request, beyond an acquire's Wait;
	// default 5 s.
	RequestTimeout time.Duration
	// ConnectTimeout bounds each connection attempt; default 1 s.
	ConnectTimeout time.Duration
	// SafetyMargin is subtracted from the time a grant has left; 0 means
	// the default, a tenth of the lease's TTL.
	SafetyMargin time.Duration
	// Log, when set, gets one line per keepalive event of Hold (renewed,
	// retrying, ended); never a secret.  Called from the keepalive's
	// goroutine.
	Log func(msg string)
	// WatchEvents: while Hold keeps leases (or sessions are kept), one
	// goroutine follows the event stream; a kept lease the server
	// announces as ended (or taken by a newer token), or a kept session it
	// announces as ended, is lost at once instead of at its next renew,
	// and a reset renews everything kept at once.  A latency optimisation
	// only: safety never depends on it.
	WatchEvents bool
	// KeepaliveConns is how many kept-alive connections the renews of
	// kept leases and sessions go out on, pipelined (up to 64 renews
	// written at once on each); default 4.  Every kept lease has its own
	// goroutine and timer, but thousands of them renew over these few
	// connections instead of opening one per renew.
	KeepaliveConns int
}

// Client talks to one or more tenured servers.  It is safe for concurrent
// use; create one per process.
type Client struct {
	urls    []*url.URL
	hc      *http.Client // a fresh connection per request
	pipe    pipeliner    // the keepalive's pipelined renews
	connect time.Duration
	tls     *tls.Config
	owner   string
	bearer  string
	timeout time.Duration
	margin  time.Duration
	log     func(string)

	watchEvents bool
	follow      follower

	mu      sync.Mutex
	current int // index of the URL that last answered
}

// New makes a Client.  No connection is made yet.
func New(o Options) (*Client, error) {
	if len(o.URLs) < 1 || len(o.URLs) > MaxURLs {
		return nil, localErr("invalid", "between 1 and %d server URLs are needed", MaxURLs)
	}
	c := &Client{bearer: o.Bearer, timeout: o.RequestTimeout, margin: o.SafetyMargin, log: o.Log,
		watchEvents: o.WatchEvents}
	for _, s := range o.URLs {
		u, err := parseBase(s)
		if err != nil {
			return nil, err
		}
		c.urls = append(c.urls, u)
	}
	if strings.ContainsAny(o.Bearer, "\r\n") {
		return nil, localErr("invalid", "the bearer token contains a line break")
	}
	c.owner = o.OwnerID
	if c.owner == "" {
		host, _ := os.Hostname()
		if host == "" {
			host = "localhost"
		}
		c.owner = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if len(c.owner) > OwnerMax {
		return nil, localErr("invalid", "owner id must be 1 to %d bytes", OwnerMax)
	}
	if c.timeout <= 0 {
		c.timeout = 5 * time.Second
	}
	connect := o.ConnectTimeout
	if connect <= 0 {
		connect = time.Second
	}
	// A fresh connection per request: a kept-alive one that the server
	// closes while a request is being sent on it would leave that
	// request's outcome unknown.
	c.hc = &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: connect}).DialContext,
		TLSClientConfig:     o.TLS,
		TLSHandshakeTimeout: connect,
		DisableCompression:  true,
		DisableKeepAlives:   true,
	}}
	c.connect, c.tls = connect, o.TLS
	c.pipe.n = o.KeepaliveConns
	if c.pipe.n <= 0 {
		c.pipe.n = 4
	}
	c.pipe.reqs, c.pipe.quit = make(chan *renewReq), make(chan struct{})
	return c, nil
}

func parseBase(s string) (*url.URL, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(strings.TrimRight(s, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, localErr("invalid", "server URL %q must be http:// or https://", s)
	}
	return u, nil
}

// Close releases the client's resources.  Leases held through Hold end
// with their Hold calls, not here; sessions with End.
func (c *Client) Close() {
	c.hc.CloseIdleConnections()
	c.pipe.stop.Do(func() { close(c.pipe.quit) })
}

// OwnerID is the owner of acquires that name none.
func (c *Client) OwnerID() string { return c.owner }

func (c *Client) marginFor(ttl time.Duration) time.Duration {
	if c.margin > 0 {
		return c.margin
	}
	return ttl / 10
}

func (c *Client) logf(format string, args ...any) {
	if c.log != nil {
		c.log(fmt.Sprintf(format, args...))
	}
}

// answer is one response: its status, body, and the instant just before
// its request was sent.
type answer struct {
	status int
	body   []byte
	sent   time.Time
}

// do sends method path with body (JSON, or none when nil) and returns the
// answer.  The request ends by ctx's deadline and at most timeout+extra
// from now.
func (c *Client) do(ctx context.Context, method, path string, body any, extra time.Duration) (*answer, error) {
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return nil, localErr("invalid", "encode request: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout+extra)
	defer cancel()
	c.mu.Lock()
	start := c.current
	c.mu.Unlock()
	var last *answer
	var err error
	for i := range c.urls {
		idx := (start + i) % len(c.urls)
		var a *answer
		var connected bool
		a, connected, err = c.once(ctx, c.urls[idx], method, path, data)
		if err != nil && !connected {
			continue // nothing was sent: the next URL may take it
		}
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.current = idx
		c.mu.Unlock()
		if a.status == http.StatusServiceUnavailable && i+1 < len(c.urls) {
			last = a // unchanged state: another instance may take it
			continue
		}
		return a, nil
	}
	if last != nil {
		return last, nil
	}
	return nil, err
}

// once makes one request to base.  connected says whether a connection was
// made (after it, the request may have been processed).
func (c *Client) once(ctx context.Context, base *url.URL, method, path string, data []byte) (*answer, bool, error) {
	var mu sync.Mutex
	var sent time.Time
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
		mu.Lock()
		if sent.IsZero() {
			sent = time.Now() // before any byte of the request is written
		}
		mu.Unlock()
	}}
	connected := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !sent.IsZero()
	}
	var rd io.Reader
	if data != nil {
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, base.String()+path, rd)
	if err != nil {
		return nil, false, localErr("invalid", "request: %v", err)
	}
	c.header(req, data != nil)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, connected(), transportErr(base, err, connected())
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBodySize+1))
	if err != nil {
		return nil, true, transportErr(base, err, true)
	}
	if len(b) > maxBodySize {
		return nil, true, localErr("protocol", "answer larger than %d bytes", maxBodySize)
	}
	mu.Lock()
	defer mu.Unlock()
	return &answer{status: resp.StatusCode, body: b, sent: sent}, true, nil
}

func (c *Client) header(req *http.Request, hasBody bool) {
	req.Header.Set("Accept", "application/json")
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
}

// transportErr is the *Error of a request that got no answer.
func transportErr(base *url.URL, err error, connected bool) *Error {
	code := "transport"
	var ne net.Error
	switch {
	case !connected:
		code = "connect"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		code = "timeout"
	}
	return &Error{Code: code, kind: code, Message: base.Redacted() + ": " + errText(err), Err: err}
}

// errText is err's text without the request URL that net/http adds.
func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// failed turns an error answer into its *Error.
func failed(a *answer) *Error {
	var b errorBody
	_ = json.Unmarshal(a.body, &b) // a body that is not JSON still has a status
	return fromAnswer(a.status, &b)
}

// decode parses a JSON answer into v.
func decode(a *answer, v any) error {
	if err := json.Unmarshal(a.body, v); err != nil {
		return localErr("protocol", "answer is not the JSON expected: %v", err)
	}
	return nil
}

func leasePath(name, suffix string) string {
	return "/v1/leases/" + url.PathEscape(name) + suffix
}

func checkName(name string) error {
	if len(name) == 0 || len(name) > NameMax {
		return localErr("invalid", "a lease name must be 1 to %d bytes", NameMax)
	}
	return nil
}
