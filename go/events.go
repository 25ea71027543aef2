// SPDX-License-Identifier: MIT

// The event stream (GET /v1/events, text/event-stream) as an iterator that
// reconnects through the client's URLs and resumes with Last-Event-ID
// after the last id it saw, so nothing is lost or repeated; when the server
// no longer has the missed events it sends a "reset": read the state again.

package tenure

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Event is one event of the stream.  Type is "acquired", "released",
// "expired", "revoked", "session_opened", "session_ended" or "reset"; a
// reset has no name, owner or token, a session event no name or token.
type Event struct {
	ID        uint64 // the event's id; resume after it with LastEventID
	Type      string
	Name      string
	OwnerID   string
	Token     uint64
	Floor     uint64 // the name's floor after the event
	Message   string // a reset's explanation, if any
	SessionID string // a session event's session
	Reason    string // session_ended: "expired", "released" or "revoked"
}

// EventOptions configure Events.
type EventOptions struct {
	// LastEventID, when not nil, resumes after that id: the server sends
	// what came after it, or a reset when it no longer has it.
	LastEventID *uint64
	// IdleTimeout: a stream silent this long (heartbeats included) counts
	// as cut; default 60 s.
	IdleTimeout time.Duration
	// NoReconnect ends the iteration at the first cut instead of resuming.
	NoReconnect bool
}

// maxEventLine caps one line of the stream, and one event's data (its
// data lines joined): a server cannot make the client hold more.
const maxEventLine = 64 * 1024

// EventStream iterates over events: for s.Next() { ev := s.Event() }, then
// s.Err().  Next, Event and Err belong to one goroutine; Close, LastID and
// Subscribed may be called from any.
type EventStream struct {
	c      *Client
	prefix string
	idle   time.Duration
	once   bool
	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex
	lastID     uint64
	hasID      bool
	subscribed chan struct{}
	subOnce    sync.Once

	body    io.ReadCloser
	rd      *bufio.Reader
	idleT   *time.Timer
	reqStop context.CancelFunc
	attempt int
	ev      Event
	err     error
}

// Events follows the lease events of names starting with prefix until ctx
// is done or the stream is closed.
func (c *Client) Events(ctx context.Context, prefix string, o EventOptions) *EventStream {
	s := &EventStream{c: c, prefix: prefix, idle: o.IdleTimeout, once: o.NoReconnect,
		subscribed: make(chan struct{})}
	if s.idle <= 0 {
		s.idle = 60 * time.Second
	}
	if o.LastEventID != nil {
		s.lastID, s.hasID = *o.LastEventID, true
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	return s
}

// Close ends the iteration (from any goroutine).
func (s *EventStream) Close() { s.cancel() }

// Subscribed is closed once a server confirmed the subscription.
func (s *EventStream) Subscribed() <-chan struct{} { return s.subscribed }

// LastID is the id to resume from, and whether there is one yet.
func (s *EventStream) LastID() (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastID, s.hasID
}

// Event is the event the last Next returned true for.
func (s *EventStream) Event() Event { return s.ev }

// Err is why Next returned false: nil after Close or the end of ctx, else
// the server's refusal (e.g. ErrUnauthorized) or, with NoReconnect, the
// cut.
func (s *EventStream) Err() error { return s.err }

// Next waits for the next event; false when the stream ended.
func (s *EventStream) Next() bool {
	for s.ctx.Err() == nil {
		if s.body == nil {
			if err := s.open(); err != nil {
				if !s.retryable(err) {
					s.finish(err)
					return false
				}
				s.pause(true)
				continue
			}
		}
		ev, err := s.read()
		if err == nil {
			s.ev = ev
			return true
		}
		s.drop()
		if s.once {
			s.finish(err)
			return false
		}
		s.pause(false)
	}
	s.finish(nil)
	return false
}

func (s *EventStream) finish(err error) {
	s.drop()
	if s.ctx.Err() == nil {
		s.err = err
	}
	s.cancel()
}

func (s *EventStream) retryable(err error) bool {
	if s.once {
		return false
	}
	return errors.Is(err, ErrTransport) || errors.Is(err, ErrUnavailable) ||
		errors.Is(err, ErrTooManyRequests) || errors.Is(err, ErrProtocol)
}

// pause waits before a reconnection: 100 ms after a cut, doubling to 5 s
// while no server answers.
func (s *EventStream) pause(failed bool) {
	d := 100 * time.Millisecond
	if failed {
		s.attempt++
		for i := 1; i < s.attempt && d < 5*time.Second; i++ {
			d *= 2
		}
		if d > 5*time.Second {
			d = 5 * time.Second
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
	case <-t.C:
	}
}

func (s *EventStream) drop() {
	if s.body != nil {
		s.idleT.Stop()
		s.reqStop()
		s.body.Close()
		s.body, s.rd = nil, nil
	}
}

// open connects to the next URL and checks the answer's status.
func (s *EventStream) open() error {
	c := s.c
	c.mu.Lock()
	base := c.urls[(c.current+s.attempt)%len(c.urls)]
	c.mu.Unlock()
	path := "/v1/events"
	if s.prefix != "" {
		path += "?" + url.Values{"prefix": {s.prefix}}.Encode()
	}
	rctx, stop := context.WithCancel(s.ctx)
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, base.String()+path, nil)
	if err != nil {
		stop()
		return localErr("invalid", "request: %v", err)
	}
	c.header(req, false)
	req.Header.Set("Accept", "text/event-stream")
	if id, ok := s.LastID(); ok {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(id, 10))
	}
	first := time.AfterFunc(c.timeout, stop) // no answer at all: a cut
	resp, err := c.hc.Do(req)
	first.Stop()
	if err != nil {
		stop()
		return transportErr(base, err, true)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBodySize))
		resp.Body.Close()
		stop()
		return failed(&answer{status: resp.StatusCode, body: b})
	}
	s.attempt = 0
	s.body, s.reqStop = resp.Body, stop
	s.rd = bufio.NewReaderSize(resp.Body, 4096)
	s.idleT = time.AfterFunc(s.idle, stop)
	return nil
}

// line reads one line without its end; every byte read counts as life.
func (s *EventStream) line() ([]byte, error) {
	var buf []byte
	for {
		part, err := s.rd.ReadSlice('\n')
		s.idleT.Reset(s.idle)
		buf = append(buf, part...)
		if err == nil {
			return bytes.TrimRight(buf, "\r\n"), nil
		}
		if err != bufio.ErrBufferFull {
			return nil, localErr("transport", "event stream cut: %v", err)
		}
		if len(buf) > maxEventLine {
			return nil, localErr("protocol", "event line longer than %d bytes", maxEventLine)
		}
	}
}

// read parses lines until an event with data is complete.
func (s *EventStream) read() (Event, error) {
	var id *uint64
	var data []byte
	for {
		ln, err := s.line()
		if err != nil {
			return Event{}, err
		}
		if len(ln) == 0 {
			if ev, ok := s.dispatch(id, data); ok {
				return ev, nil
			}
			id, data = nil, nil
			continue
		}
		if ln[0] == ':' {
			if bytes.HasPrefix(ln, []byte(": subscribed")) {
				s.subOnce.Do(func() { close(s.subscribed) })
			}
			continue
		}
		field, value, _ := bytes.Cut(ln, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "id":
			if n, err := strconv.ParseUint(string(value), 10, 64); err == nil {
				id = &n
			}
		case "data":
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, value...)
			if len(data) > maxEventLine {
				return Event{}, localErr("protocol", "event data longer than %d bytes", maxEventLine)
			}
		}
	}
}

// dispatch ends one event block: its id becomes the resume point, and its
// data, when it is an event, is returned.
func (s *EventStream) dispatch(id *uint64, data []byte) (Event, bool) {
	if id != nil {
		s.mu.Lock()
		s.lastID, s.hasID = *id, true
		s.mu.Unlock()
	}
	if data == nil {
		return Event{}, false
	}
	var j struct {
		Type      string  `json:"type"`
		Name      string  `json:"name"`
		OwnerID   string  `json:"owner_id"`
		Token     *uint64 `json:"token"`
		Floor     *uint64 `json:"floor"`
		Message   string  `json:"message"`
		SessionID string  `json:"session_id"`
		Reason    string  `json:"reason"`
	}
	if json.Unmarshal(data, &j) != nil || j.Type == "" {
		return Event{}, false
	}
	ev := Event{Type: j.Type, Name: j.Name, OwnerID: j.OwnerID, Message: j.Message,
		SessionID: j.SessionID, Reason: j.Reason}
	if id != nil {
		ev.ID = *id
	}
	if j.Token != nil {
		ev.Token = *j.Token
	}
	if j.Floor != nil {
		ev.Floor = *j.Floor
	}
	return ev, true
}
