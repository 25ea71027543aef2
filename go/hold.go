// SPDX-License-Identifier: MIT

// Hold: acquire, keep the lease alive while a function runs, cancel the
// function's context as soon as the lease is lost or its safe time runs
// out, release at the end.  The keepalive renews when a third of the TTL
// has passed since the last successful renew was sent, retries with
// backoff (TTL/30 doubling up to TTL/6) while safe time is left, and bounds
// every renew by the lease's safe deadline, as libtenure's does.

package tenure

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Hold acquires name, runs body with the lease and a context that is
// cancelled as soon as the lease is lost (the server said so) or its safe
// time runs out (no renew succeeded in time), keeps the lease alive
// meanwhile, and releases it when body returns.
//
// The cancelled context tells an honest body to stop; it is not the safety
// mechanism.  Inside body, check l.Held() right before each write, and
// stamp the write with l.Token for the sink's fence: a process frozen
// past its TTL resumes before any goroutine could cancel anything.
//
// Hold returns the acquire's error; else, when the lease was lost while
// body ran, ErrLost or ErrExpired (nothing is released then), unless body
// returned an error of its own other than the context's cancellation,
// which is returned as it is; else body's error; else a release answered
// ErrLost.
func (c *Client) Hold(ctx context.Context, name string, o AcquireOptions,
	body func(ctx context.Context, l *Lease) error) error {
	l, err := c.Acquire(ctx, name, o)
	if err != nil {
		return err
	}
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	done := make(chan struct{})
	wake := make(chan struct{}, 1)
	if c.watchEvents {
		c.watch(l, wake)
		defer c.unwatch(l)
	}
	go func() {
		defer close(done)
		c.keep(l, stop, wake, cancel)
	}()
	berr := body(bctx, l)
	close(stop)
	<-done
	// One reading: the safe time may run out between two.
	if end := l.Err(); errors.Is(end, ErrReleased) {
		return berr // body released it itself
	} else if end != nil {
		if berr != nil && !errors.Is(berr, context.Canceled) {
			return berr
		}
		return end
	}
	rctx, rcancel := context.WithTimeout(context.Background(), c.timeout)
	defer rcancel()
	rerr := l.Release(rctx)
	if berr != nil {
		return berr
	}
	if errors.Is(rerr, ErrLost) {
		return rerr
	}
	if rerr != nil {
		c.logf("release of lease %q token=%d failed: %v", l.Name, l.Token, rerr)
	}
	return nil
}

// kept is what the keepalive renews: a lease of Hold, or a session.
type kept interface {
	fmt.Stringer
	Err() error
	// times: when the last successful renew was sent, the TTL, and the
	// end of the safe time.
	times() (sent time.Time, ttl time.Duration, deadline time.Time)
	takeRenewNow() bool
	// renewKept is one renew on the keepalive's connections, bounded by
	// ctx.
	renewKept(ctx context.Context) error
	SafeFor() time.Duration
}

func (l *Lease) times() (time.Time, time.Duration, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent, l.ttl, l.deadline
}

func (l *Lease) takeRenewNow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.renewNow
	l.renewNow = false
	return now
}

func (l *Lease) renewKept(ctx context.Context) error { return l.renew(ctx, l.TTL(), true) }

// keep renews k until stop is closed or k ends; cancel runs when it ends.
// wake says that the event follower changed k (lost, or renew now).
func (c *Client) keep(k kept, stop, wake <-chan struct{}, cancel func()) {
	var backoff time.Duration
	sent, ttl, _ := k.times()
	next := sent.Add(ttl / 3)
	for {
		_, ttl, deadline := k.times()
		if err := k.Err(); err != nil {
			c.logf("keepalive of %v ended: %v", k, err)
			cancel()
			return
		}
		at := next
		if deadline.Before(at) {
			at = deadline
		}
		t := time.NewTimer(time.Until(at))
		select {
		case <-stop:
			t.Stop()
			return
		case <-wake:
			t.Stop()
		case <-t.C:
		}
		if k.takeRenewNow() {
			next = time.Now()
		}
		if time.Now().Before(next) {
			continue // woke for the deadline: Err() decides
		}
		err := renewBounded(k, deadline, stop)
		if err == nil {
			backoff = 0
			sent, ttl, _ := k.times()
			next = sent.Add(ttl / 3)
			c.logf("renewed %v safe_for=%v", k, k.SafeFor())
			continue
		}
		backoff = nextBackoff(backoff, ttl)
		next = time.Now().Add(backoff)
		c.logf("renew of %v failed: %v", k, err)
	}
}

// renewBounded is one renew of the keepalive, bounded by the safe
// deadline and abandoned when stop is closed.
func renewBounded(k kept, deadline time.Time, stop <-chan struct{}) error {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return k.renewKept(ctx)
}

// nextBackoff: from TTL/30 (at least 10 ms), doubling, at most TTL/6.
func nextBackoff(prev, ttl time.Duration) time.Duration {
	first := ttl / 30
	if first < 10*time.Millisecond {
		first = 10 * time.Millisecond
	}
	limit := ttl / 6
	if limit < first {
		limit = first
	}
	if prev == 0 {
		return first
	}
	if 2*prev > limit {
		return limit
	}
	return 2 * prev
}
