// SPDX-License-Identifier: MIT

// A lease held by this process: its safe time (the time left of the last
// successful acquire or renew, counted on the monotonic clock from the
// instant that request was sent, minus the safety margin), its renew and
// release.  A lease that was lost, released or ran out is never revived.

package tenure

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

type leaseState int

const (
	stateHeld leaseState = iota
	stateLost
	stateExpired
	stateReleased
)

// Lease is one grant.  Name, Owner, Token and Proof never change; stamp
// every write with Token and let the sink fence it (package fence).  A
// Lease is safe for concurrent use.
type Lease struct {
	Name  string
	Owner string
	// Token is the fencing token: strictly increasing per grant, never
	// reused; public, never a credential.
	Token uint64
	// Proof is the server's signature of (name, token), "" unless the
	// server signs grants.
	Proof string

	c      *Client
	secret string
	sess   *Session // the session it was taken under, or nil

	mu       sync.Mutex
	state    leaseState
	ttl      time.Duration
	sent     time.Time // when the last successful acquire or renew was sent
	deadline time.Time // end of the safe time; zero: never granted here
	endErr   *Error    // why it was lost
	renewNow bool      // the event stream was reset: renew at once
}

// String describes the lease without its secret.
func (l *Lease) String() string {
	return fmt.Sprintf("lease %q token=%d owner=%q", l.Name, l.Token, l.Owner)
}

// Secret is the credential for renew and release (hex).  Never log it.
func (l *Lease) Secret() string { return l.secret }

// TTL is the lease's time to live as last granted.
func (l *Lease) TTL() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ttl
}

// granted folds a successful acquire or renew, sent at sent, into l.
func (l *Lease) granted(sent time.Time, ttl, expiresIn time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != stateHeld {
		return // lost, expired or released: never revived
	}
	if !l.deadline.IsZero() && sent.Before(l.sent) {
		return // an older request answered late
	}
	l.ttl = ttl
	l.sent = sent
	l.deadline = sent.Add(expiresIn - l.c.marginFor(ttl))
}

// safeLocked is the safe time left at now; it turns the lease expired once
// it ran out.  A lease under a session has its session's safe time, and
// ends with it (locks: the lease's, then the session's).
func (l *Lease) safeLocked(now time.Time) time.Duration {
	if l.sess != nil && l.state == stateHeld {
		left, st, err := l.sess.safeState(now)
		if left <= 0 && st != stateHeld {
			l.state, l.endErr = st, err
		}
		return left
	}
	if l.state != stateHeld || l.deadline.IsZero() {
		return 0
	}
	left := l.deadline.Sub(now)
	if left <= 0 {
		l.state = stateExpired
		return 0
	}
	return left
}

// SafeFor is how long no other holder can exist: the time left of the last
// successful acquire or renew, on the monotonic clock, counted from the
// instant that request was sent, minus the safety margin.  0 once the lease
// was lost, released or ran out; once 0 it never grows back, even if a late
// renew answer arrives.  A process resumed from SIGSTOP past its safe time
// reads 0 at its very next call.
func (l *Lease) SafeFor() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.safeLocked(time.Now())
}

// Held is SafeFor() > 0: call it right before each write.
func (l *Lease) Held() bool { return l.SafeFor() > 0 }

// Err is nil while the lease is held, else why not: ErrExpired, ErrLost
// (with the server's answer when it said so) or ErrReleased.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.errLocked()
}

func (l *Lease) errLocked() error {
	l.safeLocked(time.Now())
	switch l.state {
	case stateExpired:
		return localErr("expired", "the safe time of lease %q ran out", l.Name)
	case stateLost:
		if l.endErr != nil {
			return l.endErr
		}
		return localErr("lost", "lease %q was lost", l.Name)
	case stateReleased:
		return localErr("released", "lease %q was released", l.Name)
	}
	return nil
}

type renewJSON struct {
	Token       uint64 `json:"token"`
	LeaseSecret string `json:"lease_secret"`
	TTLMs       int64  `json:"ttl_ms,omitempty"`
}

// Renew extends the lease; its safe time then counts from this request's
// sending.  ttl 0 keeps the TTL.  ErrLost when the server says the grant is
// gone (for good: acquire again for a new token), ErrExpired without
// sending anything when the safe time already ran out, ErrForbidden on a
// wrong secret (the handle is then lost too), ErrReleased after Release;
// transport errors leave the lease as it was.
//
// A lease taken under a session lives as long as its session: renew the
// session (the server refuses this renew with ErrBadRequest, and nothing
// changes).
func (l *Lease) Renew(ctx context.Context, ttl time.Duration) error {
	return l.renew(ctx, ttl, false)
}

// renew is Renew; kept: on the keepalive's kept-alive connections.
func (l *Lease) renew(ctx context.Context, ttl time.Duration, kept bool) error {
	l.mu.Lock()
	err := l.renewAllowed()
	l.mu.Unlock()
	if err != nil {
		return err
	}
	path := leasePath(l.Name, "")
	body := &renewJSON{Token: l.Token, LeaseSecret: l.secret, TTLMs: ms(ttl)}
	var a *answer
	if kept {
		a, err = l.c.renewVia(ctx, path, body)
	} else {
		a, err = l.c.do(ctx, http.MethodPatch, path, body, 0)
	}
	if err != nil {
		return err
	}
	return l.applyRenew(a, ttl)
}

// refreshWaited gives a waiting acquire's grant its safe time back.  That
// time counts from the acquire's sending, as every request's does, so the
// wait used it up (after waiting the TTL none was left).  When more than
// half of it went, one renew restarts the count from its own sending; if it
// fails the lease stays as the grant left it (run out, or lost when the
// server says so).
func (l *Lease) refreshWaited(ctx context.Context) {
	l.mu.Lock()
	d := l.deadline
	spent := l.state == stateHeld && 2*time.Until(d) < d.Sub(l.sent)
	if spent {
		l.deadline = time.Time{} // renewable, never writable meanwhile
	}
	l.mu.Unlock()
	if !spent {
		return
	}
	_ = l.Renew(ctx, 0)
	l.mu.Lock()
	if l.deadline.IsZero() {
		l.deadline = d
	}
	l.mu.Unlock()
}

func (l *Lease) renewAllowed() error {
	if l.state == stateHeld && l.deadline.IsZero() && l.sess == nil {
		return nil // adopted: a renew is what makes it held
	}
	return l.errLocked()
}

// applyRenew folds a renew's answer into the lease.
func (l *Lease) applyRenew(a *answer, ttl time.Duration) error {
	if a.status != http.StatusOK {
		e := failed(a)
		if e.Is(ErrLost) || e.Is(ErrForbidden) {
			l.mu.Lock()
			if l.state == stateHeld {
				l.state, l.endErr = stateLost, e
			}
			l.mu.Unlock()
		}
		return e
	}
	var g grantJSON
	if err := decode(a, &g); err != nil {
		return err
	}
	if g.ExpiresInMs == nil {
		return localErr("protocol", "renew answer without expires_in_ms")
	}
	if g.TTLMs != nil && *g.TTLMs > 0 {
		ttl = time.Duration(*g.TTLMs) * time.Millisecond
	} else if ttl <= 0 {
		ttl = l.TTL()
	}
	l.granted(a.sent, ttl, time.Duration(*g.ExpiresInMs)*time.Millisecond)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.safeLocked(time.Now()) <= 0 {
		if l.state == stateReleased {
			return l.errLocked()
		}
		return localErr("expired", "the renew of lease %q answered after its safe time ran out", l.Name)
	}
	return nil
}

// Release gives the lease back.  From this call on it is neither held nor
// renewed, whatever the outcome.  ErrLost when it was no longer live.  A
// lease under a session leaves the session; the session goes on.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	l.state = stateReleased
	l.mu.Unlock()
	err := l.release(ctx)
	if l.sess != nil {
		l.sess.ended(l, err)
	}
	return err
}

func (l *Lease) release(ctx context.Context) error {
	a, err := l.c.do(ctx, http.MethodDelete, leasePath(l.Name, ""),
		&renewJSON{Token: l.Token, LeaseSecret: l.secret}, 0)
	if err != nil {
		return err
	}
	if a.status != http.StatusOK && a.status != http.StatusNoContent {
		return failed(a)
	}
	return nil
}

// Session is the session the lease was taken under, or nil.
func (l *Lease) Session() *Session { return l.sess }
