// SPDX-License-Identifier: MIT

// The steps of a scenario (tests/conformance/README.md), each through the
// Go client's public API.

package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tenure"
)

func (r *runner) step(st map[string]any) (map[string]any, error) {
	ctx := context.Background()
	op, _ := st["do"].(string)
	res, err, ok := r.sessionStep(ctx, op, st)
	if ok {
		if err != nil {
			return errResult(err)
		}
		return res, nil
	}
	switch op {
	case "acquire":
		if _, under := st["session"]; under {
			res, err = r.sessionAcquire(ctx, st)
			break
		}
		res, err = r.acquire(ctx, st)
	case "adopt":
		var l *tenure.Lease
		l, err = r.c.Adopt(r.real(str(st, "name")), uint64(r.num(st, "token")), str(st, "secret"))
		r.leases[str(st, "as")] = l
		res = map[string]any{"ok": true}
	case "renew":
		l := r.leases[str(st, "lease")]
		if err = l.Renew(ctx, r.msArg(st, "ttl_ms")); err == nil {
			res = map[string]any{"ok": true, "safe_for_ms": l.SafeFor().Milliseconds()}
		}
	case "release":
		if err = r.leases[str(st, "lease")].Release(ctx); err == nil {
			res = map[string]any{"ok": true}
		}
	case "safe":
		res = map[string]any{"safe_for_ms": r.leases[str(st, "lease")].SafeFor().Milliseconds()}
	case "check":
		res, err = r.check(ctx, st)
	case "get":
		res, err = r.get(ctx, st)
	case "force_release":
		if err = r.c.ForceRelease(ctx, r.real(str(st, "name"))); err == nil {
			res = map[string]any{"ok": true}
		}
	case "sleep":
		time.Sleep(r.msArg(st, "ms"))
	case "events_open":
		return nil, r.openEvents()
	case "events_expect":
		return nil, r.expectEvents(st)
	default:
		return nil, fmt.Errorf("unknown step %q", op)
	}
	if err != nil {
		return errResult(err)
	}
	return res, nil
}

func (r *runner) acquire(ctx context.Context, st map[string]any) (map[string]any, error) {
	l, err := r.c.Acquire(ctx, r.real(str(st, "name")), tenure.AcquireOptions{
		Owner: str(st, "owner"), TTL: r.msArg(st, "ttl_ms"), Wait: r.msArg(st, "wait_ms"),
		RequestID: str(st, "request_id"), LockDelay: r.msArg(st, "lock_delay_ms")})
	if err != nil {
		return nil, err
	}
	if as := str(st, "as"); as != "" {
		r.leases[as] = l
	}
	return map[string]any{"ok": true, "token": int64(l.Token), "owner_id": l.Owner,
		"ttl_ms": l.TTL().Milliseconds(), "safe_for_ms": l.SafeFor().Milliseconds()}, nil
}

func (r *runner) check(ctx context.Context, st map[string]any) (map[string]any, error) {
	cr, err := r.c.Check(ctx, r.real(str(st, "name")), uint64(r.num(st, "token")))
	if err != nil {
		return nil, err
	}
	var tok any
	if cr.Live {
		tok = int64(cr.Token)
	}
	return map[string]any{"current": cr.Current, "token": tok, "floor": int64(cr.Floor)}, nil
}

func (r *runner) get(ctx context.Context, st map[string]any) (map[string]any, error) {
	li, err := r.c.Get(ctx, r.real(str(st, "name")))
	if errors.Is(err, tenure.ErrNotFound) {
		return map[string]any{"found": false}, nil
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"found": true, "owner_id": li.OwnerID, "token": int64(li.Token)}, nil
}

// openEvents follows the scenario's namespace in a goroutine and waits
// until the server confirmed the subscription.
func (r *runner) openEvents() error {
	if r.stream != nil {
		r.stream.Close()
	}
	r.mu.Lock()
	r.got = nil
	r.mu.Unlock()
	s := r.c.Events(context.Background(), r.prefix+r.scenario+"/", tenure.EventOptions{})
	r.stream = s
	go func() {
		for s.Next() {
			ev := s.Event()
			got := map[string]any{"type": ev.Type, "name": ev.Name,
				"owner_id": ev.OwnerID, "token": int64(ev.Token), "floor": int64(ev.Floor)}
			if ev.SessionID != "" { // every session's: this run's only
				owner, mine := r.ownerRel(ev.OwnerID)
				if !mine {
					continue
				}
				got = map[string]any{"type": ev.Type, "session_id": ev.SessionID,
					"owner_id": owner, "reason": ev.Reason}
			}
			r.mu.Lock()
			r.got = append(r.got, got)
			r.mu.Unlock()
			select {
			case r.more <- struct{}{}:
			default:
			}
		}
	}()
	select {
	case <-s.Subscribed():
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("event stream did not subscribe")
	}
}

func (r *runner) expectEvents(st map[string]any) error {
	want, _ := st["events"].([]any)
	timeout := 5 * time.Second
	if _, ok := st["timeout_ms"]; ok {
		timeout = r.msArg(st, "timeout_ms")
	}
	end := time.NewTimer(timeout)
	defer end.Stop()
	for {
		r.mu.Lock()
		got := append([]map[string]any(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= len(want) {
			for i, w := range want {
				if err := r.match(w, got[i], fmt.Sprintf("events[%d]", i)); err != nil {
					return err
				}
			}
			return nil
		}
		select {
		case <-r.more:
		case <-end.C:
			return fmt.Errorf("events: %d of %d came: %v", len(got), len(want), got)
		}
	}
}
