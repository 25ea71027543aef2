// SPDX-License-Identifier: MIT

// The lease calls of the API: acquire (a new *Lease), adopt, get, list,
// check and force release (docs/API.md).

package tenure

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// LeaseInfo is a live lease as the server reports it (Get, List, the
// holder of a held name).
type LeaseInfo struct {
	Name    string
	OwnerID string
	Token   uint64
	// ExpiresIn is the time the lease had left when the server answered
	// (0 when not reported).
	ExpiresIn time.Duration
}

type infoJSON struct {
	Name        string  `json:"name"`
	OwnerID     string  `json:"owner_id"`
	Token       *uint64 `json:"token"`
	ExpiresInMs *int64  `json:"expires_in_ms"`
}

func (j *infoJSON) info() LeaseInfo {
	li := LeaseInfo{Name: j.Name, OwnerID: j.OwnerID}
	if j.Token != nil {
		li.Token = *j.Token
	}
	if j.ExpiresInMs != nil && *j.ExpiresInMs > 0 {
		li.ExpiresIn = time.Duration(*j.ExpiresInMs) * time.Millisecond
	}
	return li
}

// AcquireOptions are the arguments of an acquire besides the name.
type AcquireOptions struct {
	// TTL is the lease's time to live (required; whole milliseconds).
	TTL time.Duration
	// Owner names the holder; "" means the client's OwnerID.
	Owner string
	// Wait > 0 queues the acquire on the server (first come, first served
	// per name) for up to that long while the name is held.
	Wait time.Duration
	// RequestID makes a retry idempotent: the same name, owner and
	// RequestID while the grant is live return that grant again.  ""
	// means one drawn for this call: every acquire carries one, since the
	// client sends a request again to the next server after a 503, and a
	// 503 does not prove that nothing was done (the PostgreSQL store
	// answers 503 for a commit whose connection broke before its result
	// came); with the same RequestID the next server answers that very
	// grant instead of 409 held by this owner.
	RequestID string
	// LockDelay: after this lease expires (not after a release), nobody
	// gets the name for this long.
	LockDelay time.Duration
}

type acquireJSON struct {
	Name        string `json:"name"`
	OwnerID     string `json:"owner_id"`
	TTLMs       int64  `json:"ttl_ms"`
	WaitMs      int64  `json:"wait_ms,omitempty"`
	RequestID   string `json:"request_id,omitempty"`
	LockDelayMs int64  `json:"lock_delay_ms,omitempty"`
}

type grantJSON struct {
	OwnerID     string  `json:"owner_id"`
	Token       *uint64 `json:"token"`
	LeaseSecret string  `json:"lease_secret"`
	TTLMs       *int64  `json:"ttl_ms"`
	ExpiresInMs *int64  `json:"expires_in_ms"`
	Proof       string  `json:"proof"`
}

func ms(d time.Duration) int64 { return int64(d / time.Millisecond) }

func (o *AcquireOptions) body(name, owner string) (*acquireJSON, error) {
	if o.TTL < time.Millisecond {
		return nil, localErr("invalid", "the TTL must be at least 1 ms")
	}
	if o.Wait < 0 || o.LockDelay < 0 {
		return nil, localErr("invalid", "wait and lock delay must not be negative")
	}
	if o.Owner != "" {
		owner = o.Owner
	}
	if len(owner) > OwnerMax {
		return nil, localErr("invalid", "owner id must be 1 to %d bytes", OwnerMax)
	}
	rid := o.RequestID
	if rid == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, localErr("internal", "cannot draw a request_id: %v", err)
		}
		rid = hex.EncodeToString(b[:])
	}
	return &acquireJSON{Name: name, OwnerID: owner, TTLMs: ms(o.TTL), WaitMs: ms(o.Wait),
		RequestID: rid, LockDelayMs: ms(o.LockDelay)}, nil
}

// Acquire takes the lease name.  It returns ErrHeld (the *Error's Holder
// says who holds it), ErrLockDelay (RetryAfter), ErrTimeout (the outcome
// is unknown: retry with the same RequestID), ErrConnect, or another
// *Error.  The lease's safe time counts from the instant just before the
// request was sent.
func (c *Client) Acquire(ctx context.Context, name string, o AcquireOptions) (*Lease, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	body, err := o.body(name, c.owner)
	if err != nil {
		return nil, err
	}
	a, err := c.do(ctx, http.MethodPost, "/v1/leases", body, o.Wait)
	if err != nil {
		return nil, err
	}
	if a.status != http.StatusOK && a.status != http.StatusCreated {
		return nil, failed(a)
	}
	var g grantJSON
	if err := decode(a, &g); err != nil {
		return nil, err
	}
	if g.Token == nil || *g.Token > TokenMax || g.LeaseSecret == "" || g.ExpiresInMs == nil {
		return nil, localErr("protocol", "grant without token, lease_secret or expires_in_ms")
	}
	ttl := o.TTL
	if g.TTLMs != nil && *g.TTLMs > 0 {
		ttl = time.Duration(*g.TTLMs) * time.Millisecond
	}
	owner := g.OwnerID
	if owner == "" {
		owner = body.OwnerID
	}
	l := &Lease{Name: name, Owner: owner, Token: *g.Token, Proof: g.Proof, c: c, secret: g.LeaseSecret}
	l.granted(a.sent, ttl, time.Duration(*g.ExpiresInMs)*time.Millisecond)
	if o.Wait > 0 {
		l.refreshWaited(ctx)
	}
	return l, nil
}

// Adopt makes a handle for a grant made elsewhere (e.g. by "tenure
// acquire"), to renew or release it.  Its safe time is 0 until a renew
// succeeds.
func (c *Client) Adopt(name string, token uint64, secret string) (*Lease, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if secret == "" || token > TokenMax {
		return nil, localErr("invalid", "a token up to 2^53 and a secret are needed")
	}
	return &Lease{Name: name, Token: token, c: c, secret: secret}, nil
}

// Get returns the live lease of name, or ErrNotFound when it is free.
func (c *Client) Get(ctx context.Context, name string) (LeaseInfo, error) {
	if err := checkName(name); err != nil {
		return LeaseInfo{}, err
	}
	a, err := c.do(ctx, http.MethodGet, leasePath(name, ""), nil, 0)
	if err != nil {
		return LeaseInfo{}, err
	}
	if a.status != http.StatusOK {
		return LeaseInfo{}, failed(a)
	}
	var j infoJSON
	if err := decode(a, &j); err != nil {
		return LeaseInfo{}, err
	}
	if j.Token == nil {
		return LeaseInfo{}, localErr("protocol", "lease without a token")
	}
	return j.info(), nil
}

// ListOptions select a page of live leases.
type ListOptions struct {
	Prefix string // names starting with it
	After  string // names after this one (the Next of the previous page)
	Limit  int    // at most this many; 0: the server's default (100)
}

// List returns one page of live leases in name order, and the After of the
// next page ("" at the end).
func (c *Client) List(ctx context.Context, o ListOptions) ([]LeaseInfo, string, error) {
	var j struct {
		Leases []infoJSON `json:"leases"`
		Next   *string    `json:"next"`
	}
	if err := c.getPage(ctx, "/v1/leases", o, &j); err != nil {
		return nil, "", err
	}
	out := make([]LeaseInfo, 0, len(j.Leases))
	for i := range j.Leases {
		out = append(out, j.Leases[i].info())
	}
	return out, nextAfter(j.Next), nil
}

// getPage reads one page of the list at path (o as its query) into j.
func (c *Client) getPage(ctx context.Context, path string, o ListOptions, j any) error {
	if q := listQuery(o); len(q) > 0 {
		path += "?" + q.Encode()
	}
	a, err := c.do(ctx, http.MethodGet, path, nil, 0)
	if err != nil {
		return err
	}
	if a.status != http.StatusOK {
		return failed(a)
	}
	return decode(a, j)
}

// nextAfter is a page's next (null at the end) as the After of the next
// page ("" at the end).
func nextAfter(next *string) string {
	if next == nil {
		return ""
	}
	return *next
}

func listQuery(o ListOptions) url.Values {
	q := url.Values{}
	if o.Prefix != "" {
		q.Set("prefix", o.Prefix)
	}
	if o.After != "" {
		q.Set("after", o.After)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	return q
}

// CheckResult is the answer of Check.
type CheckResult struct {
	// Current: the token asked about is the live grant of the name.
	Current bool
	// Live: some grant of the name is live; Token is its token.
	Live  bool
	Token uint64
	// Floor is the highest token ever granted for the name (0 if none):
	// a sink may admit a token only if it is >= the floor it knows.
	Floor uint64
}

// Check asks whether token is the live grant of name, and the name's floor
// (what a sink that can call the service uses).
func (c *Client) Check(ctx context.Context, name string, token uint64) (CheckResult, error) {
	if err := checkName(name); err != nil {
		return CheckResult{}, err
	}
	if token > TokenMax {
		return CheckResult{}, localErr("invalid", "a token is at most 2^53")
	}
	a, err := c.do(ctx, http.MethodGet, leasePath(name, "/check?token="+strconv.FormatUint(token, 10)), nil, 0)
	if err != nil {
		return CheckResult{}, err
	}
	if a.status != http.StatusOK {
		return CheckResult{}, failed(a)
	}
	var j struct {
		Current *bool   `json:"current"`
		Token   *uint64 `json:"token"`
		Floor   *uint64 `json:"floor"`
	}
	if err := decode(a, &j); err != nil {
		return CheckResult{}, err
	}
	if j.Current == nil || j.Floor == nil {
		return CheckResult{}, localErr("protocol", "check answer without current or floor")
	}
	r := CheckResult{Current: *j.Current, Floor: *j.Floor, Live: j.Token != nil}
	if j.Token != nil {
		r.Token = *j.Token
	}
	return r, nil
}

// ForceRelease ends whatever grant of name is live ("?force=true", an
// admin's operation once authentication is on); the server emits a
// "revoked" event.  ErrLost when nothing was live.
func (c *Client) ForceRelease(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	a, err := c.do(ctx, http.MethodDelete, leasePath(name, "?force=true"), nil, 0)
	if err != nil {
		return err
	}
	if a.status != http.StatusOK && a.status != http.StatusNoContent {
		return failed(a)
	}
	return nil
}
