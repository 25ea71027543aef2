// SPDX-License-Identifier: MIT

// The renews of the keepalive, pipelined.  Every kept lease and session
// has its own goroutine and timer, but their renews do not each open a
// connection: they queue here, and a few workers (Options.KeepaliveConns),
// each with one kept-alive connection, write a batch of them at once and
// read the answers in order (HTTP/1.1 pipelining, which tenured reads
// ahead up to --max-pipeline).  Only renews go this way: sending one twice
// is harmless, so a kept-alive connection the server closed is simply
// replaced and the renews sent again.  Each renew still counts its safe
// time from the instant just before its batch was written.

package tenure

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

const (
	pipeBatch   = 64               // renews written at once on one connection
	pipeIdleMax = 15 * time.Second // tenured closes idle connections after 30 s
)

// renewReq is one renew waiting for a worker.
type renewReq struct {
	path     string
	body     []byte
	deadline time.Time
	done     chan renewResult // buffered: the worker never waits
}

type renewResult struct {
	a   *answer
	err error
}

// pipeliner is the client's queue of renews and its workers.
type pipeliner struct {
	n     int
	reqs  chan *renewReq
	quit  chan struct{}
	start sync.Once
	stop  sync.Once
}

// renewVia sends a renew (of a lease or a session) through the workers
// and waits for its answer until ctx ends.
func (c *Client) renewVia(ctx context.Context, path string, body any) (*answer, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, localErr("invalid", "encode request: %v", err)
	}
	p := &c.pipe
	p.start.Do(func() {
		for i := 0; i < p.n; i++ {
			go c.pipeWorker()
		}
	})
	deadline, ok := ctx.Deadline()
	if !ok || time.Until(deadline) > c.timeout {
		deadline = time.Now().Add(c.timeout)
	}
	r := &renewReq{path: path, body: data, deadline: deadline, done: make(chan renewResult, 1)}
	select {
	case p.reqs <- r:
	case <-ctx.Done():
		return nil, transportErr(c.urls[0], ctx.Err(), false)
	case <-p.quit: // after Close: one connection of its own, as any request
		return c.do(ctx, http.MethodPatch, path, body, 0)
	}
	select {
	case res := <-r.done:
		return res.a, res.err
	case <-ctx.Done():
		return nil, transportErr(c.urls[0], ctx.Err(), true)
	}
}

// pipeWorker takes batches of renews off the queue until Close.
func (c *Client) pipeWorker() {
	p := &c.pipe
	pc := &pipeConn{c: c}
	defer pc.close()
	for {
		var batch []*renewReq
		select {
		case r := <-p.reqs:
			batch = append(batch, r)
		case <-p.quit:
			return
		}
	more:
		for len(batch) < pipeBatch {
			select {
			case r := <-p.reqs:
				batch = append(batch, r)
			default:
				break more
			}
		}
		outs := pc.send(batch)
		for i, r := range batch {
			r.done <- outs[i]
		}
	}
}

// pipeConn is one worker's kept-alive connection.
type pipeConn struct {
	c    *Client
	conn net.Conn
	br   *bufio.Reader
	base *url.URL
	used time.Time
}

func (pc *pipeConn) close() {
	if pc.conn != nil {
		pc.conn.Close()
		pc.conn, pc.br = nil, nil
	}
}

// send gives one outcome per renew, through the URLs in turn as do goes:
// the next one when nothing was sent, or for the renews answered 503.
func (pc *pipeConn) send(batch []*renewReq) []renewResult {
	c := pc.c
	outs := make([]renewResult, len(batch))
	todo := make([]int, len(batch))
	for i := range todo {
		todo[i] = i
	}
	deadline := batch[0].deadline
	for _, r := range batch[1:] {
		if r.deadline.Before(deadline) {
			deadline = r.deadline
		}
	}
	c.mu.Lock()
	start := c.current
	c.mu.Unlock()
	var err error
	for i := range c.urls {
		idx := (start + i) % len(c.urls)
		var got []renewResult
		if got, err = pc.pipeline(c.urls[idx], batch, todo, deadline); err != nil {
			continue // nothing was sent
		}
		c.mu.Lock()
		c.current = idx
		c.mu.Unlock()
		var again []int
		for k, j := range todo {
			outs[j] = got[k]
			if a := got[k].a; a != nil && a.status == http.StatusServiceUnavailable && i+1 < len(c.urls) {
				again = append(again, j)
			}
		}
		if todo = again; len(todo) == 0 {
			return outs
		}
	}
	for _, j := range todo {
		if outs[j].a == nil && outs[j].err == nil {
			outs[j].err = err
		}
	}
	return outs
}

func (pc *pipeConn) dial(base *url.URL, deadline time.Time) error {
	pc.close()
	d := &net.Dialer{Timeout: pc.c.connect, Deadline: deadline}
	host := base.Host
	if base.Port() == "" {
		host = net.JoinHostPort(base.Hostname(), map[bool]string{true: "443", false: "80"}[base.Scheme == "https"])
	}
	var conn net.Conn
	var err error
	if base.Scheme == "https" {
		cfg := &tls.Config{}
		if pc.c.tls != nil {
			cfg = pc.c.tls.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = base.Hostname()
		}
		conn, err = tls.DialWithDialer(d, "tcp", host, cfg)
	} else {
		conn, err = d.Dial("tcp", host)
	}
	if err != nil {
		return transportErr(base, err, false)
	}
	pc.conn, pc.br, pc.base = conn, bufio.NewReader(conn), base
	return nil
}

// pipeline sends the renews todo of batch to base and reads their answers;
// an error only when nothing could be sent.  A reused connection that
// answers nothing is replaced once; one that the server closes after some
// answers gets the rest on a new connection.
func (pc *pipeConn) pipeline(base *url.URL, batch []*renewReq, todo []int, deadline time.Time) ([]renewResult, error) {
	out := make([]renewResult, 0, len(todo))
	replaced := false
	for len(out) < len(todo) {
		reused := pc.conn != nil && pc.base == base && time.Since(pc.used) < pipeIdleMax
		if !reused {
			if err := pc.dial(base, deadline); err != nil {
				if len(out) == 0 {
					return nil, err
				}
				for len(out) < len(todo) {
					out = append(out, renewResult{err: err})
				}
				break
			}
		}
		before := len(out)
		err := pc.round(base, batch, todo[before:], deadline, &out)
		pc.used = time.Now()
		if err == nil {
			continue // all answered, or the server closed: the rest again
		}
		pc.close()
		if len(out) == before && reused && !replaced && !errors.Is(err, ErrTimeout) {
			replaced = true
			continue
		}
		for len(out) < len(todo) {
			out = append(out, renewResult{err: err})
		}
	}
	return out, nil
}

// round writes the renews at once and reads their answers into out; nil
// when done or when the server closed the connection after an answer.
func (pc *pipeConn) round(base *url.URL, batch []*renewReq, todo []int, deadline time.Time, out *[]renewResult) error {
	c := pc.c
	_ = pc.conn.SetDeadline(deadline)
	reqs := make([]*http.Request, len(todo))
	var buf bytes.Buffer
	for k, j := range todo {
		req, err := http.NewRequest(http.MethodPatch, base.String()+batch[j].path, bytes.NewReader(batch[j].body))
		if err != nil {
			return localErr("invalid", "request: %v", err)
		}
		c.header(req, true)
		if err := req.Write(&buf); err != nil {
			return localErr("invalid", "request: %v", err)
		}
		reqs[k] = req
	}
	sent := time.Now() // just before the bytes go out: safe time counts from here
	if _, err := pc.conn.Write(buf.Bytes()); err != nil {
		return transportErr(base, err, true)
	}
	for _, req := range reqs {
		resp, err := http.ReadResponse(pc.br, req)
		if err != nil {
			return transportErr(base, err, true)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxBodySize+1))
		resp.Body.Close()
		if err != nil {
			return transportErr(base, err, true)
		}
		if len(b) > maxBodySize {
			return localErr("protocol", "answer larger than %d bytes", maxBodySize)
		}
		*out = append(*out, renewResult{a: &answer{status: resp.StatusCode, body: b, sent: sent}})
		if resp.Close {
			pc.close()
			return nil
		}
	}
	return nil
}
