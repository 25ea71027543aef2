// SPDX-License-Identifier: MIT

// The event follower of Options.WatchEvents: one goroutine per client
// reads GET /v1/events while any lease is kept by Hold, marks a kept lease
// lost when the server announces that its grant ended (expired, revoked,
// released) or that a newer token took its name, and on a reset (events
// may have been missed) has every kept lease renewed at once.  A latency
// optimisation only, as in libtenure: nothing here can make a lease look
// held, and the safe-time rule bounds a holder whatever the stream does.

package tenure

import (
	"context"
	"sync"
)

// follower is the client's event follower and the leases Hold keeps.
type follower struct {
	mu     sync.Mutex
	kept   map[*Lease]chan struct{} // each keepalive's wake-up
	cancel context.CancelFunc       // stops the stream; nil when not running
	done   chan struct{}
}

// watch registers l with its keepalive's wake-up channel; the follower
// starts with the first kept lease.
func (c *Client) watch(l *Lease, wake chan struct{}) {
	f := &c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.kept == nil {
		f.kept = map[*Lease]chan struct{}{}
	}
	f.kept[l] = wake
	if f.cancel == nil {
		ctx, cancel := context.WithCancel(context.Background())
		f.cancel, f.done = cancel, make(chan struct{})
		go c.followMain(ctx, f.done)
	}
}

// unwatch forgets l; the follower stops with the last kept lease.
func (c *Client) unwatch(l *Lease) {
	f := &c.follow
	f.mu.Lock()
	delete(f.kept, l)
	var done chan struct{}
	if len(f.kept) == 0 && f.cancel != nil {
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

// apply folds one event into the kept leases.
func (c *Client) apply(ev Event) {
	f := &c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	if ev.Type == "reset" {
		c.logf("the event stream was reset: renewing every kept lease now")
	}
	for l, wake := range f.kept {
		if ev.Type == "reset" {
			l.mu.Lock()
			l.renewNow = true
			l.mu.Unlock()
		} else if l.Name == ev.Name && ends(l, ev) {
			l.mu.Lock()
			if l.state == stateHeld {
				l.state = stateLost
				l.endErr = localErr("lost", "lease %q: the server announced %s (token %d)", l.Name, ev.Type, ev.Token)
			}
			l.mu.Unlock()
		} else {
			continue
		}
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}
