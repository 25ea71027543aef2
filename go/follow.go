// SPDX-License-Identifier: MIT

// The event follower of Options.WatchEvents: one goroutine per client
// reads GET /v1/events while any lease is kept by Hold or any session is
// kept, marks a kept lease (or a lease of a kept session) lost when the
// server announces that its grant ended (expired, revoked, released) or
// that a newer token took its name, marks a kept session lost when the
// server announces it ended, and on a reset (events may have been missed)
// has everything kept renewed at once.  A latency
// optimisation only, as in libtenure: nothing here can make a lease look
// held, and the safe-time rule bounds a holder whatever the stream does.

package tenure

import (
	"context"
	"sync"
)

// follower is the client's event follower and the leases Hold keeps.
type follower struct {
	mu       sync.Mutex
	kept     map[*Lease]chan struct{} // each keepalive's wake-up
	sessions map[*Session]bool        // kept sessions
	cancel   context.CancelFunc       // stops the stream; nil when not running
	done     chan struct{}
}

// watch registers l with its keepalive's wake-up channel; the follower
// starts with the first kept lease or session.
func (c *Client) watch(l *Lease, wake chan struct{}) {
	f := &c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.kept == nil {
		f.kept = map[*Lease]chan struct{}{}
	}
	f.kept[l] = wake
	c.startFollower()
}

// watchSession registers a kept session.
func (c *Client) watchSession(s *Session) {
	f := &c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sessions == nil {
		f.sessions = map[*Session]bool{}
	}
	f.sessions[s] = true
	c.startFollower()
}

// startFollower: f.mu held.
func (c *Client) startFollower() {
	f := &c.follow
	if f.cancel == nil {
		ctx, cancel := context.WithCancel(context.Background())
		f.cancel, f.done = cancel, make(chan struct{})
		go c.followMain(ctx, f.done)
	}
}

// unwatch forgets l; the follower stops with the last kept lease or
// session.
func (c *Client) unwatch(l *Lease) {
	c.stopFollower(func(f *follower) { delete(f.kept, l) })
}

// unwatchSession forgets s.
func (c *Client) unwatchSession(s *Session) {
	c.stopFollower(func(f *follower) { delete(f.sessions, s) })
}

func (c *Client) stopFollower(forget func(*follower)) {
	f := &c.follow
	f.mu.Lock()
	forget(f)
	var done chan struct{}
	if len(f.kept) == 0 && len(f.sessions) == 0 && f.cancel != nil {
		f.cancel()
		done = f.done
		f.cancel, f.done = nil, nil
	}
	f.mu.Unlock()
	if done != nil {
		<-done
	}
}

func (c *Client) followMain(ctx context.Context, done chan struct{}) {
	defer close(done)
	s := c.Events(ctx, "", EventOptions{})
	defer s.Close()
	for s.Next() {
		c.apply(s.Event())
	}
	if err := s.Err(); err != nil {
		c.logf("event follower stopped: %v", err)
	}
}

// ends says whether an event about l's name ends l.
func ends(l *Lease, ev Event) bool {
	if ev.Type == "acquired" {
		return ev.Token > l.Token
	}
	return ev.Token == l.Token && (ev.Type == "expired" || ev.Type == "revoked" || ev.Type == "released")
}

// apply folds one event into the kept leases and sessions.
func (c *Client) apply(ev Event) {
	f := &c.follow
	var later []func() // OnLeaseEnd calls, once f.mu is released
	defer func() {
		for _, fn := range later {
			fn()
		}
	}()
	f.mu.Lock()
	defer f.mu.Unlock()
	if ev.Type == "reset" {
		c.logf("the event stream was reset: renewing everything kept now")
	}
	for l, wake := range f.kept {
		if ev.Type == "reset" {
			l.mu.Lock()
			l.renewNow = true
			l.mu.Unlock()
		} else if l.Name == ev.Name && ends(l, ev) {
			l.lose(ev)
		} else {
			continue
		}
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	for s := range f.sessions {
		if fn := c.applySession(s, ev); fn != nil {
			later = append(later, fn)
		}
	}
}

// applySession folds one event into a kept session; what it returns
// reports a lease's end.
func (c *Client) applySession(s *Session, ev Event) func() {
	switch {
	case ev.Type == "reset":
		s.mu.Lock()
		s.renewNow = true
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	case ev.Type == "session_ended" && ev.SessionID == s.ID:
		s.lose(localErr("lost", "session %s: the server announced session_ended (%s)", s.ID, ev.Reason))
	case ev.Name != "":
		if l := s.lease(ev.Name); l != nil && ends(l, ev) {
			l.lose(ev)
			return func() { s.ended(l, l.Err()) }
		}
	}
	return nil
}

// lose marks l lost after an event that ended it.
func (l *Lease) lose(ev Event) {
	l.mu.Lock()
	if l.state == stateHeld {
		l.state = stateLost
		l.endErr = localErr("lost", "lease %q: the server announced %s (token %d)", l.Name, ev.Type, ev.Token)
	}
	l.mu.Unlock()
}
