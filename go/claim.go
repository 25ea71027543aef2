// SPDX-License-Identifier: MIT

// Leases under a session: one acquire (POST /v1/leases with the session),
// a claim of many names at once (POST /v1/sessions/{id}/leases, each name
// decided on its own), a batch release, the list of live sessions, and
// HoldSession (docs/SESSIONS.md).

package tenure

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// Batches: the API takes at least 256 names per claim and 64 KiB of body;
// more is sent as several batches.
const (
	BatchNames     = 256
	batchBodyBytes = 48 * 1024
)

// SessionAcquireOptions are the arguments of Session.Acquire besides the
// name; as AcquireOptions, without a TTL (the session's).
type SessionAcquireOptions struct {
	Owner     string        // "" means the session's owner
	Wait      time.Duration // queue on the server for up to this long
	RequestID string        // "" means one drawn for this call
	LockDelay time.Duration // after an expiry, nobody gets the name for this long
}

// Acquire takes name under the session.  Errors as Client.Acquire, and
// ErrLost when the session is not live (it is then lost).
func (s *Session) Acquire(ctx context.Context, name string, o SessionAcquireOptions) (*Lease, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	owner := o.Owner
	if owner == "" {
		owner = s.Owner
	}
	if owner == "" { // an adopted session
		owner = s.c.owner
	}
	ao := AcquireOptions{TTL: time.Millisecond, Owner: owner, Wait: o.Wait,
		RequestID: o.RequestID, LockDelay: o.LockDelay}
	b, err := ao.body(name, owner)
	if err != nil {
		return nil, err
	}
	body := map[string]any{"name": name, "owner_id": b.OwnerID, "request_id": b.RequestID,
		"session_id": s.ID, "session_secret": s.secret}
	if b.WaitMs > 0 {
		body["wait_ms"] = b.WaitMs
	}
	if b.LockDelayMs > 0 {
		body["lock_delay_ms"] = b.LockDelayMs
	}
	a, err := s.c.do(ctx, http.MethodPost, "/v1/leases", body, o.Wait)
	if err != nil {
		return nil, err
	}
	if a.status != http.StatusOK && a.status != http.StatusCreated {
		return nil, s.refused(a)
	}
	var g grantJSON
	if err := decode(a, &g); err != nil {
		return nil, err
	}
	return s.grant(name, owner, g.OwnerID, g.Token, g.LeaseSecret, g.Proof)
}

// refused is the error of an answer; a 409 lost says the session ended.
func (s *Session) refused(a *answer) *Error {
	e := failed(a)
	if e.Is(ErrLost) {
		s.lose(e)
	}
	return e
}

func (s *Session) grant(name, owner, gotOwner string, token *uint64, secret, proof string) (*Lease, error) {
	if token == nil || *token > TokenMax || secret == "" {
		return nil, localErr("protocol", "grant without token or lease_secret")
	}
	if gotOwner != "" {
		owner = gotOwner
	}
	l := &Lease{Name: name, Owner: owner, Token: *token, Proof: proof, c: s.c,
		secret: secret, sess: s, ttl: s.TTL()}
	return s.add(l), nil
}

// ClaimOptions are the arguments of Claim besides the names.
type ClaimOptions struct {
	Owner     string        // of the grants; "" means the session's
	LockDelay time.Duration // of each grant, as AcquireOptions.LockDelay
}

// HeldName is a name of a claim that another holder has.
type HeldName struct {
	Name   string
	Holder LeaseInfo
}

// DelayedName is a name of a claim that is in its lock delay.
type DelayedName struct {
	Name       string
	RetryAfter time.Duration
}

// ClaimResult says what became of each name of a claim.
type ClaimResult struct {
	Granted   []*Lease
	Held      []HeldName
	LockDelay []DelayedName
}

type claimJSON struct {
	Granted []struct {
		Name        string  `json:"name"`
		OwnerID     string  `json:"owner_id"`
		Token       *uint64 `json:"token"`
		LeaseSecret string  `json:"lease_secret"`
		Proof       string  `json:"proof"`
	} `json:"granted"`
	Held []struct {
		Name   string    `json:"name"`
		Holder *infoJSON `json:"holder"`
	} `json:"held"`
	LockDelay []struct {
		Name         string `json:"name"`
		RetryAfterMs int64  `json:"retry_after_ms"`
	} `json:"lock_delay"`
}

// Claim claims many names at once: each is decided on its own, as a
// non-waiting acquire, and the result says which were granted (a new
// lease each), held or in their lock delay.  More than BatchNames names
// go as several batches.  ErrLost when the session is not live.
func (s *Session) Claim(ctx context.Context, names []string, o ClaimOptions) (*ClaimResult, error) {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if err := checkName(n); err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, localErr("invalid", "name %q is given twice", n)
		}
		seen[n] = true
	}
	res := &ClaimResult{}
	for len(names) > 0 {
		n, size := 0, 0
		for n < len(names) && n < BatchNames && (n == 0 || size+len(names[n])+8 <= batchBodyBytes) {
			size += len(names[n]) + 8
			n++
		}
		if err := s.claimBatch(ctx, names[:n], o, res); err != nil {
			return res, err
		}
		names = names[n:]
	}
	return res, nil
}

func (s *Session) claimBatch(ctx context.Context, names []string, o ClaimOptions, res *ClaimResult) error {
	if err := s.Err(); err != nil {
		return err
	}
	body := map[string]any{"session_secret": s.secret, "names": names}
	owner := s.Owner
	if o.Owner != "" {
		body["owner_id"], owner = o.Owner, o.Owner
	}
	if o.LockDelay > 0 {
		body["lock_delay_ms"] = ms(o.LockDelay)
	}
	a, err := s.c.do(ctx, http.MethodPost, s.path("/leases"), body, 0)
	if err != nil {
		return err
	}
	if a.status != http.StatusOK {
		return s.refused(a)
	}
	var j claimJSON
	if err := decode(a, &j); err != nil {
		return err
	}
	for _, g := range j.Granted {
		l, err := s.grant(g.Name, owner, g.OwnerID, g.Token, g.LeaseSecret, g.Proof)
		if err != nil {
			return err
		}
		res.Granted = append(res.Granted, l)
	}
	for _, h := range j.Held {
		hn := HeldName{Name: h.Name}
		if h.Holder != nil {
			hn.Holder = h.Holder.info()
		}
		res.Held = append(res.Held, hn)
	}
	for _, d := range j.LockDelay {
		res.LockDelay = append(res.LockDelay, DelayedName{Name: d.Name,
			RetryAfter: time.Duration(d.RetryAfterMs) * time.Millisecond})
	}
	return nil
}

type nameToken struct {
	Name  string `json:"name"`
	Token uint64 `json:"token"`
}

// Release gives back several leases of the session in batches; the
// session goes on.  From this call on none of them is held.  lost are
// those that were no longer live.
func (s *Session) Release(ctx context.Context, leases ...*Lease) (released, lost []*Lease, err error) {
	for _, l := range leases {
		if l.sess != s {
			return nil, nil, localErr("invalid", "%v is not of this session", l)
		}
	}
	for _, l := range leases {
		l.mu.Lock()
		l.state = stateReleased
		l.mu.Unlock()
	}
	for i := 0; i < len(leases) && err == nil; i += BatchNames {
		j := i + BatchNames
		if j > len(leases) {
			j = len(leases)
		}
		var r, g []*Lease
		r, g, err = s.releaseBatch(ctx, leases[i:j])
		released, lost = append(released, r...), append(lost, g...)
	}
	gone := map[*Lease]bool{}
	for _, l := range lost {
		gone[l] = true
	}
	for _, l := range leases {
		var e error = err
		if gone[l] {
			e = localErr("lost", "lease %q was not live when released", l.Name)
		}
		s.ended(l, e)
	}
	return released, lost, err
}

func (s *Session) releaseBatch(ctx context.Context, leases []*Lease) (released, lost []*Lease, err error) {
	list := make([]nameToken, len(leases))
	for i, l := range leases {
		list[i] = nameToken{l.Name, l.Token}
	}
	a, err := s.c.do(ctx, http.MethodDelete, s.path("/leases"),
		map[string]any{"session_secret": s.secret, "leases": list}, 0)
	if err != nil {
		return nil, nil, err
	}
	if a.status != http.StatusOK {
		return nil, nil, s.refused(a)
	}
	var j struct {
		Lost []nameToken `json:"lost"`
	}
	if err := decode(a, &j); err != nil {
		return nil, nil, err
	}
	gone := map[nameToken]bool{}
	for _, x := range j.Lost {
		gone[x] = true
	}
	for _, l := range leases {
		if gone[nameToken{l.Name, l.Token}] {
			lost = append(lost, l)
		} else {
			released = append(released, l)
		}
	}
	return released, lost, nil
}

// SessionInfo is a live session as the server shows it (never its
// secret).
type SessionInfo struct {
	ID        string
	OwnerID   string
	TTL       time.Duration // GetSession only
	ExpiresIn time.Duration
	Leases    int
}

func (j *sessionJSON) info() SessionInfo {
	si := SessionInfo{ID: j.SessionID, OwnerID: j.OwnerID, Leases: j.Leases}
	if j.TTLMs != nil {
		si.TTL = time.Duration(*j.TTLMs) * time.Millisecond
	}
	if j.ExpiresInMs != nil {
		si.ExpiresIn = time.Duration(*j.ExpiresInMs) * time.Millisecond
	}
	return si
}

// GetSession returns the live session id, or ErrNotFound when it is not
// live.
func (c *Client) GetSession(ctx context.Context, id string) (SessionInfo, error) {
	a, err := c.do(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(id), nil, 0)
	if err != nil {
		return SessionInfo{}, err
	}
	if a.status != http.StatusOK {
		return SessionInfo{}, failed(a)
	}
	var j sessionJSON
	if err := decode(a, &j); err != nil {
		return SessionInfo{}, err
	}
	return j.info(), nil
}

// ForceEndSession ends the session id and every lease of it (each
// revoked): an admin's operation once authentication is on.  ErrLost when
// it is not live.
func (c *Client) ForceEndSession(ctx context.Context, id string) error {
	a, err := c.do(ctx, http.MethodDelete, "/v1/sessions/"+url.PathEscape(id)+"?force=true", nil, 0)
	if err != nil {
		return err
	}
	if a.status != http.StatusOK && a.status != http.StatusNoContent {
		return failed(a)
	}
	return nil
}

// Sessions returns one page of live sessions whose owner_id starts with
// o.Prefix, in session_id order, and the After of the next page ("" at
// the end).
func (c *Client) Sessions(ctx context.Context, o ListOptions) ([]SessionInfo, string, error) {
	var j struct {
		Sessions []sessionJSON `json:"sessions"`
		Next     *string       `json:"next"`
	}
	if err := c.getPage(ctx, "/v1/sessions", o, &j); err != nil {
		return nil, "", err
	}
	out := make([]SessionInfo, 0, len(j.Sessions))
	for i := range j.Sessions {
		out = append(out, j.Sessions[i].info())
	}
	return out, nextAfter(j.Next), nil
}

// HoldSession opens a session, claims names (a result per name: names
// that were not granted are in claim.Held or claim.LockDelay), runs body
// with a context that is cancelled as soon as the session is lost or its
// safe time runs out, and ends the session (releasing every lease of it)
// when body returns.
//
// As Hold: the cancelled context tells an honest body to stop; check
// s.Held() (or a lease's Held()) right before each write and stamp it
// with the lease's token.  HoldSession returns the open's or claim's
// error; else, when the session was lost while body ran, ErrLost or
// ErrExpired (nothing is ended then), unless body returned an error of
// its own other than the context's cancellation; else body's error; else
// an End answered ErrLost.
func (c *Client) HoldSession(ctx context.Context, o SessionOptions, names []string,
	body func(ctx context.Context, s *Session, claim *ClaimResult) error) error {
	s, err := c.OpenSession(ctx, o)
	if err != nil {
		return err
	}
	claim := &ClaimResult{}
	if len(names) > 0 {
		if claim, err = s.Claim(ctx, names, ClaimOptions{}); err != nil {
			ectx, cancel := context.WithTimeout(context.Background(), c.timeout)
			defer cancel()
			_ = s.End(ectx)
			return err
		}
	}
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.Done():
			cancel()
		case <-bctx.Done():
		}
	}()
	berr := body(bctx, s, claim)
	if end := s.Err(); errors.Is(end, ErrReleased) {
		return berr // body ended it itself
	} else if end != nil {
		if berr != nil && !errors.Is(berr, context.Canceled) {
			return berr
		}
		return end
	}
	ectx, ecancel := context.WithTimeout(context.Background(), c.timeout)
	defer ecancel()
	eerr := s.End(ectx)
	if berr != nil {
		return berr
	}
	if errors.Is(eerr, ErrLost) {
		return eerr
	}
	if eerr != nil {
		c.logf("end of %v failed: %v", s, eerr)
	}
	return nil
}
