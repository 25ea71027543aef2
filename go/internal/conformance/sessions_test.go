// SPDX-License-Identifier: MIT

// The session steps of the shared scenarios (tests/conformance/README.md,
// "Sessions"), each through the Go client's public API.

package conformance

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"tenure"
)

// sessionEnds is what a session's keepalive reported (session_wait_end).
type sessionEnds struct {
	mu           sync.Mutex
	reason       string
	calls        int
	leaseCalls   int
	leasesBefore int
}

func (e *sessionEnds) leaseEnded(*tenure.Lease, error) {
	e.mu.Lock()
	e.leaseCalls++
	e.mu.Unlock()
}

func (r *runner) ownerReal(sym string) string { return r.prefix + r.scenario + "/" + sym }

// ownerRel is real relative to the namespace, and whether it is in it.
func (r *runner) ownerRel(real string) (string, bool) {
	ns := r.prefix + r.scenario + "/"
	if !strings.HasPrefix(real, ns) {
		return "", false
	}
	return real[len(ns):], true
}

// sessionStep runs a session step; ok is false when op is not one.
func (r *runner) sessionStep(ctx context.Context, op string, st map[string]any) (res map[string]any, err error, ok bool) {
	s := r.sessions[str(st, "session")]
	ok = true
	switch op {
	case "session_open":
		res, err = r.sessionOpen(ctx, st)
	case "session_adopt":
		var x *tenure.Session
		if x, err = r.c.AdoptSession(s.ID, str(st, "secret")); err == nil {
			r.sessions[str(st, "as")] = x
			r.ends[str(st, "as")] = &sessionEnds{}
			res = map[string]any{"ok": true}
		}
	case "session_renew":
		if err = s.Renew(ctx, r.msArg(st, "ttl_ms")); err == nil {
			res = map[string]any{"ok": true, "safe_for_ms": s.SafeFor().Milliseconds()}
		}
	case "session_end":
		if err = s.End(ctx); err == nil {
			res = map[string]any{"ok": true}
		}
	case "session_force_end":
		if err = r.c.ForceEndSession(ctx, s.ID); err == nil {
			res = map[string]any{"ok": true}
		}
	case "session_safe":
		res = map[string]any{"safe_for_ms": s.SafeFor().Milliseconds()}
	case "session_get":
		res, err = r.sessionGet(ctx, s)
	case "session_list":
		res, err = r.sessionList(ctx, st)
	case "claim":
		res, err = r.claim(ctx, s, st)
	case "release_many":
		res, err = r.releaseMany(ctx, s, st)
	case "session_keepalive":
		r.keepSession(s, r.ends[str(st, "session")])
		res = map[string]any{"ok": true}
	case "session_wait_end":
		res = r.waitEnd(r.ends[str(st, "session")], st)
	default:
		ok = false
	}
	return res, err, ok
}

func (r *runner) sessionOpen(ctx context.Context, st map[string]any) (map[string]any, error) {
	ends := &sessionEnds{}
	s, err := r.c.OpenSession(ctx, tenure.SessionOptions{Owner: r.ownerReal(str(st, "owner")),
		TTL: r.msArg(st, "ttl_ms"), NoKeepalive: true, OnLeaseEnd: ends.leaseEnded})
	var e *tenure.Error
	if errors.As(err, &e) && (e.Status == 404 || e.Status == 405 || e.Status == 501) {
		return map[string]any{"error": "not_implemented"}, nil
	}
	if err != nil {
		return nil, err
	}
	r.sessions[str(st, "as")], r.ends[str(st, "as")] = s, ends
	owner, _ := r.ownerRel(s.Owner)
	return map[string]any{"ok": true, "session_id": s.ID, "owner_id": owner,
		"ttl_ms": s.TTL().Milliseconds(), "safe_for_ms": s.SafeFor().Milliseconds()}, nil
}

func (r *runner) sessionGet(ctx context.Context, s *tenure.Session) (map[string]any, error) {
	si, err := r.c.GetSession(ctx, s.ID)
	if errors.Is(err, tenure.ErrNotFound) {
		return map[string]any{"found": false}, nil
	}
	if err != nil {
		return nil, err
	}
	owner, _ := r.ownerRel(si.OwnerID)
	return map[string]any{"found": true, "owner_id": owner, "ttl_ms": si.TTL.Milliseconds(),
		"leases": int64(si.Leases)}, nil
}

func (r *runner) sessionList(ctx context.Context, st map[string]any) (map[string]any, error) {
	owners := []any{}
	after := ""
	for {
		page, next, err := r.c.Sessions(ctx, tenure.ListOptions{Prefix: r.ownerReal(str(st, "prefix")), After: after})
		if err != nil {
			return nil, err
		}
		for _, si := range page {
			o, _ := r.ownerRel(si.OwnerID)
			owners = append(owners, o)
		}
		if next == "" {
			break
		}
		after = next
	}
	sort.Slice(owners, func(i, j int) bool { return owners[i].(string) < owners[j].(string) })
	return map[string]any{"count": int64(len(owners)), "owners": owners}, nil
}

func (r *runner) claim(ctx context.Context, s *tenure.Session, st map[string]any) (map[string]any, error) {
	syms, _ := st["names"].([]any)
	sym := map[string]string{}
	var names []string
	for _, n := range syms {
		real := r.real(n.(string))
		sym[real] = n.(string)
		names = append(names, real)
	}
	res, err := s.Claim(ctx, names, tenure.ClaimOptions{Owner: str(st, "owner"), LockDelay: r.msArg(st, "lock_delay_ms")})
	if err != nil {
		return nil, err
	}
	granted, held, delayed := map[string]any{}, map[string]any{}, map[string]any{}
	for _, l := range res.Granted {
		r.leases[str(st, "as")+sym[l.Name]] = l
		granted[sym[l.Name]] = map[string]any{"token": int64(l.Token)}
	}
	for _, h := range res.Held {
		held[sym[h.Name]] = map[string]any{"holder": map[string]any{"owner_id": h.Holder.OwnerID,
			"token": int64(h.Holder.Token)}}
	}
	for _, d := range res.LockDelay {
		delayed[sym[d.Name]] = map[string]any{"retry_after_ms": d.RetryAfter.Milliseconds()}
	}
	return map[string]any{"granted": granted, "held": held, "lock_delay": delayed}, nil
}

func (r *runner) releaseMany(ctx context.Context, s *tenure.Session, st map[string]any) (map[string]any, error) {
	labels, _ := st["leases"].([]any)
	var leases []*tenure.Lease
	for _, x := range labels {
		leases = append(leases, r.leases[x.(string)])
	}
	released, lost, err := s.Release(ctx, leases...)
	if err != nil {
		return nil, err
	}
	rel := func(ls []*tenure.Lease) []any {
		out := []any{}
		for _, l := range ls {
			o, _ := r.ownerRel(l.Name)
			out = append(out, o)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].(string) < out[j].(string) })
		return out
	}
	return map[string]any{"ok": true, "released": rel(released), "lost": rel(lost)}, nil
}

// keepSession starts the keepalive; the session's own report is its Done.
func (r *runner) keepSession(s *tenure.Session, ends *sessionEnds) {
	s.Keep()
	go func() {
		<-s.Done()
		reason := "stopped"
		switch err := s.Err(); {
		case errors.Is(err, tenure.ErrExpired):
			reason = "expired"
		case errors.Is(err, tenure.ErrLost):
			reason = "lost"
		case errors.Is(err, tenure.ErrEnded):
			reason = "released"
		}
		ends.mu.Lock()
		ends.reason, ends.leasesBefore = reason, ends.leaseCalls
		ends.calls++
		ends.mu.Unlock()
	}()
}

func (r *runner) waitEnd(ends *sessionEnds, st map[string]any) map[string]any {
	timeout := 5 * time.Second
	if _, ok := st["timeout_ms"]; ok {
		timeout = r.msArg(st, "timeout_ms")
	}
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		ends.mu.Lock()
		n := ends.calls
		ends.mu.Unlock()
		if n > 0 {
			break
		}
	}
	time.Sleep(300 * time.Millisecond) // a second report would be counted
	ends.mu.Lock()
	defer ends.mu.Unlock()
	return map[string]any{"reason": ends.reason, "calls": int64(ends.calls),
		"lease_calls": int64(ends.leaseCalls), "leases_before": int64(ends.leasesBefore)}
}

// sessionAcquire is the acquire step with a session.
func (r *runner) sessionAcquire(ctx context.Context, st map[string]any) (map[string]any, error) {
	l, err := r.sessions[str(st, "session")].Acquire(ctx, r.real(str(st, "name")), tenure.SessionAcquireOptions{
		Owner: str(st, "owner"), Wait: r.msArg(st, "wait_ms"), RequestID: str(st, "request_id"),
		LockDelay: r.msArg(st, "lock_delay_ms")})
	if err != nil {
		return nil, err
	}
	if as := str(st, "as"); as != "" {
		r.leases[as] = l
	}
	return map[string]any{"ok": true, "token": int64(l.Token), "owner_id": l.Owner,
		"ttl_ms": l.TTL().Milliseconds(), "safe_for_ms": l.SafeFor().Milliseconds()}, nil
}
