// SPDX-License-Identifier: MIT

// Sessions (docs/SESSIONS.md): one heartbeat for many leases.  A Session
// is kept alive by its own goroutine from OpenSession until End or its
// loss, one renew for all its leases.  Its safe time is counted as a
// lease's: the time left of the last acknowledged open or renew, on the
// monotonic clock from the instant that request was sent, minus the
// margin.  Every lease taken under it reads that safe time and ends with
// it (lost or expired with it, released when it is ended); each still has
// its own token, secret and Release.

package tenure

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// SessionOptions are the arguments of OpenSession.
type SessionOptions struct {
	// Owner is the session's owner_id (and the default owner of its
	// leases); "" means the client's OwnerID.
	Owner string
	// TTL is the session's time to live (required; whole milliseconds).
	TTL time.Duration
	// NoKeepalive: the caller renews the session itself (Renew), or
	// starts the keepalive later with Keep.
	NoKeepalive bool
	// OnLeaseEnd, when set, is called once for each lease of the session
	// when it ends: with the session (its error: lost, expired, or
	// released by End), alone through Release or Session.Release (the
	// release's error, nil when it went through), or when the event
	// follower hears of its loss.  Called from the goroutine that saw the
	// end; it must not block.
	OnLeaseEnd func(l *Lease, err error)
}

// Session is a session of this process.  ID (public) and Owner never
// change.  Safe for concurrent use.
type Session struct {
	ID    string
	Owner string

	c          *Client
	secret     string
	onLeaseEnd func(*Lease, error)
	stop       chan struct{} // closed by End: the keepalive stops
	stopOnce   sync.Once
	wake       chan struct{} // the follower changed the session
	done       chan struct{} // closed when the keepalive ended
	keepOnce   sync.Once
	kept       bool // the keepalive was started (under mu)

	mu       sync.Mutex
	state    leaseState
	ttl      time.Duration
	sent     time.Time // when the last successful open or renew was sent
	deadline time.Time // end of the safe time
	endErr   *Error    // why it was lost
	renewNow bool      // the event stream was reset
	leases   map[string]*Lease
}

type sessionJSON struct {
	SessionID     string `json:"session_id"`
	SessionSecret string `json:"session_secret"`
	OwnerID       string `json:"owner_id"`
	TTLMs         *int64 `json:"ttl_ms"`
	ExpiresInMs   *int64 `json:"expires_in_ms"`
	Leases        int    `json:"leases"`
}

// OpenSession opens a session (POST /v1/sessions) and keeps it alive from
// a goroutine of its own until End or its loss.
func (c *Client) OpenSession(ctx context.Context, o SessionOptions) (*Session, error) {
	if o.TTL < time.Millisecond {
		return nil, localErr("invalid", "the TTL must be at least 1 ms")
	}
	owner := o.Owner
	if owner == "" {
		owner = c.owner
	}
	if len(owner) > OwnerMax {
		return nil, localErr("invalid", "owner id must be 1 to %d bytes", OwnerMax)
	}
	a, err := c.do(ctx, http.MethodPost, "/v1/sessions",
		map[string]any{"owner_id": owner, "ttl_ms": ms(o.TTL)}, 0)
	if err != nil {
		return nil, err
	}
	if a.status != http.StatusOK && a.status != http.StatusCreated {
		return nil, failed(a)
	}
	var j sessionJSON
	if err := decode(a, &j); err != nil {
		return nil, err
	}
	if j.SessionID == "" || j.SessionSecret == "" || j.ExpiresInMs == nil {
		return nil, localErr("protocol", "session without session_id, session_secret or expires_in_ms")
	}
	s := c.newSession(j.SessionID, j.SessionSecret, owner, o.TTL, o.OnLeaseEnd)
	if j.OwnerID != "" {
		s.Owner = j.OwnerID
	}
	if j.TTLMs != nil && *j.TTLMs > 0 {
		s.ttl = time.Duration(*j.TTLMs) * time.Millisecond
	}
	s.granted(a.sent, s.ttl, time.Duration(*j.ExpiresInMs)*time.Millisecond)
	if !o.NoKeepalive {
		s.Keep()
	}
	return s, nil
}

func (c *Client) newSession(id, secret, owner string, ttl time.Duration, onLeaseEnd func(*Lease, error)) *Session {
	return &Session{ID: id, Owner: owner, c: c, secret: secret, onLeaseEnd: onLeaseEnd,
		stop: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{}),
		ttl: ttl, leases: map[string]*Lease{}}
}

// AdoptSession makes a handle for a session opened elsewhere (e.g. by
// "tenure session open"), to renew, claim under or end it.  Its safe time
// is 0 until a renew succeeds; it is not kept until Keep.
func (c *Client) AdoptSession(id, secret string) (*Session, error) {
	if id == "" || secret == "" {
		return nil, localErr("invalid", "a session id and its secret are needed")
	}
	return c.newSession(id, secret, "", 0, nil), nil
}

// Keep starts the session's keepalive (OpenSession does, unless
// NoKeepalive); it runs until End or the loss of the session.  Once only.
func (s *Session) Keep() {
	s.keepOnce.Do(func() {
		s.mu.Lock()
		s.kept = true
		s.mu.Unlock()
		if s.c.watchEvents {
			s.c.watchSession(s)
		}
		go s.keepalive()
	})
}

// String describes the session without its secret.
func (s *Session) String() string { return fmt.Sprintf("session %s owner=%q", s.ID, s.Owner) }

// Secret is the session's credential (hex).  Never log it.
func (s *Session) Secret() string { return s.secret }

// TTL is the session's time to live as last granted.
func (s *Session) TTL() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ttl
}

// Done is closed once the session is no longer kept: lost, run out, or
// ended (Err says which).  Never closed for a session not kept (Keep).
func (s *Session) Done() <-chan struct{} { return s.done }

func (s *Session) granted(sent time.Time, ttl, expiresIn time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateHeld || (!s.deadline.IsZero() && sent.Before(s.sent)) {
		return // ended (never revived), or an older request answered late
	}
	s.ttl, s.sent = ttl, sent
	s.deadline = sent.Add(expiresIn - s.c.marginFor(ttl))
}

// safeState is the safe time left at now, the state and, when not held,
// the error the session's leases end with.
func (s *Session) safeState(now time.Time) (time.Duration, leaseState, *Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateHeld && !s.deadline.IsZero() && !now.Before(s.deadline) {
		s.state = stateExpired
	}
	switch s.state {
	case stateExpired:
		return 0, s.state, localErr("expired", "the safe time of session %s ran out", s.ID)
	case stateLost:
		if s.endErr != nil {
			return 0, s.state, s.endErr
		}
		return 0, s.state, localErr("lost", "session %s was lost", s.ID)
	case stateReleased: // what its leases end with
		return 0, s.state, localErr("released", "released with the end of session %s", s.ID)
	}
	if s.deadline.IsZero() {
		return 0, s.state, nil
	}
	return s.deadline.Sub(now), s.state, nil
}

// SafeFor is how long no other holder of any lease of the session can
// exist (see Lease.SafeFor); 0 once lost, ended or run out, for good.
func (s *Session) SafeFor() time.Duration {
	left, _, _ := s.safeState(time.Now())
	if left < 0 {
		return 0
	}
	return left
}

// Held is SafeFor() > 0: check it right before each write.
func (s *Session) Held() bool { return s.SafeFor() > 0 }

// Err is nil while the session is held, else why not: ErrExpired,
// ErrLost (with the server's answer) or ErrEnded (after End).
func (s *Session) Err() error {
	_, st, err := s.safeState(time.Now())
	switch st {
	case stateHeld:
		return nil
	case stateReleased:
		return localErr("ended", "session %s was ended", s.ID)
	}
	return err
}

// lose marks the session lost (the server said so).
func (s *Session) lose(e *Error) {
	s.mu.Lock()
	if s.state == stateHeld {
		s.state, s.endErr = stateLost, e
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Renew renews the session now (its keepalive does it by itself): the
// safe time of every lease of it counts again from this request's
// sending.  ttl 0 keeps the TTL.  ErrLost when the server says the session
// ended, ErrExpired without sending anything once the safe time ran out.
func (s *Session) Renew(ctx context.Context, ttl time.Duration) error {
	return s.renew(ctx, ttl, false)
}

func (s *Session) renew(ctx context.Context, ttl time.Duration, kept bool) error {
	if err := s.Err(); err != nil {
		return err
	}
	body := map[string]any{"session_secret": s.secret}
	if ttl > 0 {
		body["ttl_ms"] = ms(ttl)
	}
	var a *answer
	var err error
	if kept {
		a, err = s.c.renewVia(ctx, s.path(""), body)
	} else {
		a, err = s.c.do(ctx, http.MethodPatch, s.path(""), body, 0)
	}
	if err != nil {
		return err
	}
	if a.status != http.StatusOK {
		e := failed(a)
		if e.Is(ErrLost) || e.Is(ErrForbidden) {
			s.lose(e)
		}
		return e
	}
	var j sessionJSON
	if err := decode(a, &j); err != nil {
		return err
	}
	if j.ExpiresInMs == nil {
		return localErr("protocol", "session renew answer without expires_in_ms")
	}
	if j.TTLMs != nil && *j.TTLMs > 0 {
		ttl = time.Duration(*j.TTLMs) * time.Millisecond
	} else if ttl <= 0 {
		ttl = s.TTL()
	}
	s.granted(a.sent, ttl, time.Duration(*j.ExpiresInMs)*time.Millisecond)
	if s.SafeFor() <= 0 {
		if err := s.Err(); err != nil {
			return err
		}
		return localErr("expired", "the renew of session %s answered after its safe time ran out", s.ID)
	}
	return nil
}

func (s *Session) times() (time.Time, time.Duration, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent, s.ttl, s.deadline
}

func (s *Session) takeRenewNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.renewNow
	s.renewNow = false
	return now
}

func (s *Session) renewKept(ctx context.Context) error { return s.renew(ctx, s.TTL(), true) }

// keepalive renews the session until End or its end, then ends every
// lease of it.
func (s *Session) keepalive() {
	defer close(s.done)
	s.c.keep(s, s.stop, s.wake, func() {})
	if s.c.watchEvents {
		s.c.unwatchSession(s)
	}
	s.endLeases()
}

// endLeases reports the end of every lease still in the session.
func (s *Session) endLeases() {
	s.mu.Lock()
	all := make([]*Lease, 0, len(s.leases))
	for _, l := range s.leases {
		all = append(all, l)
	}
	s.mu.Unlock()
	for _, l := range all {
		s.ended(l, l.Err())
	}
}

// ended takes l out of the session and reports its end, once.
func (s *Session) ended(l *Lease, err error) {
	s.mu.Lock()
	if s.leases[l.Name] != l {
		s.mu.Unlock()
		return
	}
	delete(s.leases, l.Name)
	s.mu.Unlock()
	if s.onLeaseEnd != nil {
		s.onLeaseEnd(l, err)
	}
}

// add puts a granted lease in the session; an idempotent answer of a grant
// the session has already gives back the handle it has.
func (s *Session) add(l *Lease) *Lease {
	s.mu.Lock()
	if old := s.leases[l.Name]; old != nil && old.Token == l.Token {
		s.mu.Unlock()
		return old
	}
	s.leases[l.Name] = l
	s.mu.Unlock()
	return l
}

// lease is the session's lease of name, or nil.
func (s *Session) lease(name string) *Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leases[name]
}

// Leases are the session's leases still held.
func (s *Session) Leases() []*Lease {
	s.mu.Lock()
	all := make([]*Lease, 0, len(s.leases))
	for _, l := range s.leases {
		all = append(all, l)
	}
	s.mu.Unlock()
	held := all[:0]
	for _, l := range all {
		if l.Held() {
			held = append(held, l)
		}
	}
	return held
}

func (s *Session) path(suffix string) string {
	return "/v1/sessions/" + url.PathEscape(s.ID) + suffix
}

// End ends the session and with it every lease of it (each released).
// From this call on nothing of it is held, whatever the outcome.  ErrLost
// when it had already ended.
func (s *Session) End(ctx context.Context) error {
	s.mu.Lock()
	if s.state == stateHeld && !s.deadline.IsZero() && !time.Now().Before(s.deadline) {
		s.state = stateExpired
	}
	was, endErr, kept := s.state, s.endErr, s.kept
	if was == stateReleased {
		s.mu.Unlock()
		return localErr("ended", "session %s was ended", s.ID)
	}
	s.state = stateReleased
	s.mu.Unlock()
	s.stopOnce.Do(func() { close(s.stop) })
	a, err := s.c.do(ctx, http.MethodDelete, s.path(""), map[string]any{"session_secret": s.secret}, 0)
	if err == nil && a.status != http.StatusOK && a.status != http.StatusNoContent {
		err = failed(a)
	}
	if kept {
		<-s.done
	} else {
		s.endLeases()
	}
	switch {
	case was == stateLost && endErr != nil:
		return endErr
	case was == stateLost || was == stateExpired:
		return localErr("lost", "session %s had ended before End", s.ID)
	}
	return err
}
