// SPDX-License-Identifier: MIT

// The event stream against a real tenured: a new stream resumes after a
// Last-Event-ID without losing or repeating anything, a stream cut by a
// restart of the server reconnects and gets a reset (the new process never
// issued its id), and a refused stream ends with the server's error; a
// stream of oversized lines or events (a test server) ends in ErrProtocol.

package tenure_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tenure"
	"tenure/internal/testserver"
)

// read1 reads one event in a goroutine of its own (Next blocks); the
// channel is closed without a value when the stream ended.
func read1(s *tenure.EventStream) <-chan tenure.Event {
	ch := make(chan tenure.Event, 1)
	go func() {
		if s.Next() {
			ch <- s.Event()
		}
		close(ch)
	}()
	return ch
}

// recv waits (bounded) for the event of read1.
func recv(t *testing.T, s *tenure.EventStream, ch <-chan tenure.Event) tenure.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatalf("the stream ended: %v", s.Err())
		}
		return ev
	case <-time.After(30 * time.Second):
		s.Close()
		t.Fatal("no event came")
	}
	return tenure.Event{}
}

// next reads one event, bounded in time.
func next(t *testing.T, s *tenure.EventStream) tenure.Event {
	t.Helper()
	return recv(t, s, read1(s))
}

func subscribed(t *testing.T, s *tenure.EventStream) {
	t.Helper()
	select {
	case <-s.Subscribed():
	case <-time.After(30 * time.Second):
		t.Fatal("the stream did not subscribe")
	}
}

func TestEventsResumeAfterLastEventID(t *testing.T) {
	srv := testserver.Start(t)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}})
	ctx := context.Background()
	s1 := c.Events(ctx, "ev/", tenure.EventOptions{})
	first := read1(s1)
	subscribed(t, s1)
	l1, err := c.Acquire(ctx, "ev/a", tenure.AcquireOptions{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if ev := recv(t, s1, first); ev.Type != "acquired" || ev.Token != l1.Token {
		t.Fatalf("first event: %+v", ev)
	}
	id, ok := s1.LastID()
	s1.Close()
	if !ok {
		t.Fatal("no id to resume from")
	}
	l1.Release(ctx)
	l2, err := c.Acquire(ctx, "ev/a", tenure.AcquireOptions{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s2 := c.Events(ctx, "ev/", tenure.EventOptions{LastEventID: &id})
	defer s2.Close()
	ev := next(t, s2)
	if ev.Type != "released" || ev.Token != l1.Token || ev.ID <= id {
		t.Fatalf("first event after %d: %+v, want the release of %d", id, ev, l1.Token)
	}
	if ev = next(t, s2); ev.Type != "acquired" || ev.Token != l2.Token || ev.Floor != l2.Token {
		t.Fatalf("second event: %+v, want the grant of %d", ev, l2.Token)
	}
}

func TestEventsResetAfterARestart(t *testing.T) {
	srv := testserver.Start(t)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}})
	ctx := context.Background()
	s := c.Events(ctx, "rs/", tenure.EventOptions{})
	defer s.Close()
	first := read1(s)
	subscribed(t, s)
	l, err := c.Acquire(ctx, "rs/a", tenure.AcquireOptions{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if ev := recv(t, s, first); ev.Type != "acquired" || ev.Token != l.Token {
		t.Fatalf("first event: %+v", ev)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, s); ev.Type != "reset" {
		t.Fatalf("after a restart: %+v, want a reset", ev)
	}
	l2, err := c.Acquire(ctx, "rs/b", tenure.AcquireOptions{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, s); ev.Type != "acquired" || ev.Name != "rs/b" || ev.Token != l2.Token {
		t.Fatalf("after the reset: %+v, want the grant of rs/b", ev)
	}
}

func TestEventsEnd(t *testing.T) {
	srv := testserver.Start(t)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}})
	s := c.Events(context.Background(), "", tenure.EventOptions{})
	go func() {
		<-s.Subscribed()
		s.Close()
	}()
	if s.Next() || s.Err() != nil {
		t.Fatalf("a closed stream: %v", s.Err())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s := c.Events(ctx, "", tenure.EventOptions{}); s.Next() || s.Err() != nil {
		t.Fatalf("a stream of a cancelled context: %v", s.Err())
	}
	none := newClient(t, tenure.Options{URLs: []string{closedURL(t)}})
	s = none.Events(context.Background(), "", tenure.EventOptions{NoReconnect: true})
	if s.Next() || !errors.Is(s.Err(), tenure.ErrTransport) {
		t.Fatalf("no server, no reconnection: %v", s.Err())
	}
}

// A hostile or broken server cannot make the stream hold more than one
// capped line or one capped event: a line without an end, or an event of
// endless data lines, ends the stream (NoReconnect) with ErrProtocol
// (without the caps the client would wait for more, until the idle timeout
// cut the stream: a transport error).
func TestEventsRefuseOversizedLinesAndEvents(t *testing.T) {
	cases := map[string]string{
		"line":  "data: " + strings.Repeat("x", 200*1024),
		"event": strings.Repeat("data: "+strings.Repeat("y", 1000)+"\n", 200),
	}
	for what, stream := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, ": subscribed\n\n"+stream)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		c := newClient(t, tenure.Options{URLs: []string{srv.URL}})
		s := c.Events(context.Background(), "", tenure.EventOptions{NoReconnect: true, IdleTimeout: 2 * time.Second})
		if ev, ok := <-read1(s); ok {
			t.Fatalf("%s: an event came: %+v", what, ev)
		}
		if !errors.Is(s.Err(), tenure.ErrProtocol) {
			t.Fatalf("%s: the stream ended with %v, want ErrProtocol", what, s.Err())
		}
		srv.Close()
	}
}
