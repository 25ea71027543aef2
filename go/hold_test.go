// SPDX-License-Identifier: MIT

// Hold against a real tenured: it keeps the lease through several renews,
// releases it at the end, and cancels the body's context when the server
// says the grant is gone (ErrLost) or when a frozen server lets the safe
// time run out (ErrExpired), without releasing anyone's newer grant.

package tenure_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"tenure"
	"tenure/internal/testserver"
)

func TestHoldKeepsAndReleases(t *testing.T) {
	srv := testserver.Start(t)
	var renewed atomic.Int32
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}, Log: func(msg string) {
		if strings.HasPrefix(msg, "renewed") {
			renewed.Add(1)
		}
	}})
	ctx := context.Background()
	var token uint64
	err := c.Hold(ctx, "hold/a", tenure.AcquireOptions{TTL: 3 * time.Second}, func(ctx context.Context, l *tenure.Lease) error {
		token = l.Token
		for end := time.Now().Add(30 * time.Second); renewed.Load() < 3; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(end) || ctx.Err() != nil {
				t.Errorf("three renews did not come: %d, ctx %v", renewed.Load(), ctx.Err())
				return nil
			}
		}
		// Three renews later (beyond the TTL) it is the same grant.
		if cr, err := c.Check(ctx, l.Name, l.Token); err != nil || !cr.Current || !l.Held() {
			t.Errorf("the kept lease is not current: %+v, %v, held %v", cr, err, l.Held())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cr, err := c.Check(ctx, "hold/a", token); err != nil || cr.Live {
		t.Fatalf("Hold did not release at its end: %+v, %v", cr, err)
	}
	boom := errors.New("boom")
	if err := c.Hold(ctx, "hold/a", tenure.AcquireOptions{TTL: time.Second}, func(context.Context, *tenure.Lease) error {
		return boom
	}); err != boom {
		t.Fatalf("the body's error: %v", err)
	}
	if _, err := c.Get(ctx, "hold/a"); !errors.Is(err, tenure.ErrNotFound) {
		t.Fatalf("a body that failed still releases: %v", err)
	}
}

// waitCancelled is a body that waits (bounded) for its context to end and
// records whether the lease read as held then.
func waitCancelled(t *testing.T, started chan<- *tenure.Lease, heldAtEnd *bool) func(context.Context, *tenure.Lease) error {
	return func(ctx context.Context, l *tenure.Lease) error {
		started <- l
		select {
		case <-ctx.Done():
			*heldAtEnd = l.Held()
			return ctx.Err()
		case <-time.After(60 * time.Second):
			t.Error("the body's context was never cancelled")
			return nil
		}
	}
}

func TestHoldCancelsTheBodyWhenLost(t *testing.T) {
	srv := testserver.Start(t)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}})
	ctx := context.Background()
	started := make(chan *tenure.Lease, 1)
	held := true
	done := make(chan error, 1)
	go func() {
		done <- c.Hold(ctx, "hold/lost", tenure.AcquireOptions{TTL: 6 * time.Second}, waitCancelled(t, started, &held))
	}()
	l := <-started
	if err := c.ForceRelease(ctx, l.Name); err != nil {
		t.Fatal(err)
	}
	succ, err := c.Acquire(ctx, l.Name, tenure.AcquireOptions{Owner: "successor", TTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = <-done
	if !errors.Is(err, tenure.ErrLost) || errors.Is(err, tenure.ErrExpired) || held {
		t.Fatalf("Hold after the server ended the grant: %v (held at the end: %v)", err, held)
	}
	if cr, err := c.Check(ctx, l.Name, succ.Token); err != nil || !cr.Current {
		t.Fatalf("Hold released the successor's grant: %+v, %v", cr, err)
	}
}

func TestHoldCancelsTheBodyWhenTheServerFreezes(t *testing.T) {
	srv := testserver.Start(t)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}})
	started := make(chan *tenure.Lease, 1)
	held := true
	done := make(chan error, 1)
	go func() {
		done <- c.Hold(context.Background(), "hold/frozen", tenure.AcquireOptions{TTL: time.Second}, waitCancelled(t, started, &held))
	}()
	<-started
	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	err := <-done
	srv.Signal(syscall.SIGCONT)
	if !errors.Is(err, tenure.ErrExpired) || !errors.Is(err, tenure.ErrLost) || held {
		t.Fatalf("Hold on a frozen server: %v (held at the end: %v)", err, held)
	}
}

// With WatchEvents, a loss the server announces ends the body at once,
// before the first renew (TTL/3 = 20 s) could have found it.
func TestHoldHearsOfALossFromTheEvents(t *testing.T) {
	srv := testserver.Start(t)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}, WatchEvents: true})
	ctx := context.Background()
	started := make(chan *tenure.Lease, 1)
	held := true
	done := make(chan error, 1)
	go func() {
		done <- c.Hold(ctx, "watch/a", tenure.AcquireOptions{TTL: time.Minute}, waitCancelled(t, started, &held))
	}()
	l := <-started
	// The follower must be subscribed before the force release, or the
	// loss would only be found by the renew.
	for end := time.Now().Add(30 * time.Second); !subscribers(t, srv.URL, 1); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the follower did not subscribe")
		}
	}
	if err := c.ForceRelease(ctx, l.Name); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var e *tenure.Error
	if !errors.Is(err, tenure.ErrLost) || !errors.As(err, &e) || !strings.Contains(e.Message, "announced revoked") || held {
		t.Fatalf("Hold after a force release it heard of: %v (held at the end: %v)", err, held)
	}
}

// subscribers says whether the server counts n open event streams.
func subscribers(t *testing.T, url string, n int) bool {
	r, err := http.Get(url + "/metrics")
	if err != nil {
		return false
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return strings.Contains(string(b), fmt.Sprintf("\ntenure_event_subscribers %d\n", n))
}

// With WatchEvents, a reset of the stream (here: the server restarted)
// renews every kept lease at once.
func TestHoldRenewsOnAReset(t *testing.T) {
	srv := testserver.Start(t)
	var logs = make(chan string, 64)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}, WatchEvents: true, Log: func(m string) {
		select {
		case logs <- m:
		default:
		}
	}})
	err := c.Hold(context.Background(), "watch/b", tenure.AcquireOptions{TTL: time.Minute}, func(ctx context.Context, l *tenure.Lease) error {
		for end := time.Now().Add(30 * time.Second); !subscribers(t, srv.URL, 1); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(end) {
				return errors.New("the follower did not subscribe")
			}
		}
		if err := srv.Restart(); err != nil {
			return err
		}
		reset := false
		for {
			select {
			case m := <-logs:
				reset = reset || strings.HasPrefix(m, "the event stream was reset")
				if reset && strings.HasPrefix(m, "renewed") {
					return nil // renewed at once: the timer was 20 s away
				}
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(15 * time.Second):
				return errors.New("no renew after the reset")
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}
