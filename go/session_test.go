// SPDX-License-Identifier: MIT

// Sessions against a real tenured: one renew keeps every lease, a claim
// answers per name, single and batch releases, the safe time of every
// lease is the session's, the loss of the session reaches every lease
// once, HoldSession cancels its body on loss.  Skipped, with the server's
// answer, while tenured has no sessions (501).

package tenure_test

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"tenure"
	"tenure/internal/testserver"
)

// needSessions skips t unless the server at url has sessions.
func needSessions(t *testing.T, url string) {
	t.Helper()
	c := newClient(t, tenure.Options{URLs: []string{url}})
	s, err := c.OpenSession(context.Background(), tenure.SessionOptions{TTL: time.Second})
	var e *tenure.Error
	if errors.As(err, &e) && (e.Status == 404 || e.Status == 501) {
		t.Skipf("the server has no sessions yet: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := s.End(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func forceEnd(t *testing.T, url, id string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, url+"/v1/sessions/"+id+"?force=true", nil)
	r, err := http.DefaultClient.Do(req)
	if err != nil || r.StatusCode != http.StatusNoContent {
		t.Fatalf("force end: %v %v", r, err)
	}
	r.Body.Close()
}

type leaseEnds struct {
	mu  sync.Mutex
	got map[string]error
	n   int
}

func (e *leaseEnds) add(l *tenure.Lease, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.got == nil {
		e.got = map[string]error{}
	}
	e.got[l.Name] = err
	e.n++
}

func (e *leaseEnds) wait(t *testing.T, n int) map[string]error {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		e.mu.Lock()
		if e.n >= n {
			time.Sleep(200 * time.Millisecond) // nothing more may come
			defer e.mu.Unlock()
			if e.n != n {
				t.Fatalf("%d lease ends reported, %d expected", e.n, n)
			}
			return e.got
		}
		e.mu.Unlock()
	}
	t.Fatalf("%d lease ends did not come", n)
	return nil
}

func TestSessionOneRenewKeepsEveryLease(t *testing.T) {
	srv := testserver.Start(t)
	needSessions(t, srv.URL)
	var log logLines
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}, Log: log.add})
	ctx := context.Background()
	s, err := c.OpenSession(ctx, tenure.SessionOptions{Owner: "w1", TTL: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Claim(ctx, []string{"s/a", "s/b", "s/c"}, tenure.ClaimOptions{})
	if err != nil || len(res.Granted) != 3 || len(res.Held) != 0 {
		t.Fatalf("claim: %+v, %v", res, err)
	}
	time.Sleep(3500 * time.Millisecond) // past two TTLs
	if n, _ := log.count("renewed session"); n == 0 {
		t.Fatalf("the session was not renewed: %v", log.lines)
	}
	if n, _ := log.count("renewed lease"); n != 0 {
		t.Fatalf("a lease of the session was renewed alone")
	}
	for _, l := range res.Granted {
		cr, err := c.Check(ctx, l.Name, l.Token)
		if err != nil || !cr.Current || !l.Held() || l.Session() != s || l.Owner != "w1" {
			t.Fatalf("%v: %+v %v held %v", l, cr, err, l.Held())
		}
	}
	if err := s.End(ctx); err != nil {
		t.Fatal(err)
	}
	for _, l := range res.Granted {
		if _, err := c.Get(ctx, l.Name); !errors.Is(err, tenure.ErrNotFound) || l.Held() || !errors.Is(l.Err(), tenure.ErrReleased) {
			t.Fatalf("%v after End: %v, held %v, %v", l, err, l.Held(), l.Err())
		}
	}
}

func TestSessionClaimAnswersPerName(t *testing.T) {
	srv := testserver.Start(t)
	needSessions(t, srv.URL)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}})
	ctx := context.Background()
	other, err := c.Acquire(ctx, "claim/held", tenure.AcquireOptions{TTL: 30 * time.Second, Owner: "someone"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.OpenSession(ctx, tenure.SessionOptions{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.End(ctx)
	res, err := s.Claim(ctx, []string{"claim/free", "claim/held"}, tenure.ClaimOptions{})
	if err != nil || len(res.Granted) != 1 || res.Granted[0].Name != "claim/free" ||
		len(res.Held) != 1 || res.Held[0].Holder.OwnerID != "someone" || res.Held[0].Holder.Token != other.Token {
		t.Fatalf("claim: %+v, %v", res, err)
	}
	again, err := s.Claim(ctx, []string{"claim/free"}, tenure.ClaimOptions{})
	if err != nil || len(again.Granted) != 1 || again.Granted[0] != res.Granted[0] {
		t.Fatalf("the same claim again: %+v, %v", again, err)
	}
	if _, err := s.Claim(ctx, []string{"x", "x"}, tenure.ClaimOptions{}); !errors.Is(err, tenure.ErrInvalid) {
		t.Fatalf("a name twice: %v", err)
	}
}

func TestSessionAcquireAndReleases(t *testing.T) {
	srv := testserver.Start(t)
	needSessions(t, srv.URL)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}})
	ctx := context.Background()
	var ends leaseEnds
	s, err := c.OpenSession(ctx, tenure.SessionOptions{TTL: 3 * time.Second, OnLeaseEnd: ends.add})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Acquire(ctx, "rel/a", tenure.SessionAcquireOptions{})
	if err != nil || a.Session() != s || a.TTL() != 3*time.Second {
		t.Fatalf("acquire under the session: %v, %v", a, err)
	}
	b, _ := s.Acquire(ctx, "rel/b", tenure.SessionAcquireOptions{})
	d, _ := s.Acquire(ctx, "rel/d", tenure.SessionAcquireOptions{})
	if _, err := c.Acquire(ctx, "rel/a", tenure.AcquireOptions{TTL: time.Second, Owner: "x"}); !errors.Is(err, tenure.ErrHeld) {
		t.Fatalf("a name of the session: %v", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.ForceRelease(ctx, "rel/d"); err != nil {
		t.Fatal(err)
	}
	rel, lost, err := s.Release(ctx, b, d)
	if err != nil || len(rel) != 1 || rel[0] != b || len(lost) != 1 || lost[0] != d {
		t.Fatalf("batch release: %v %v %v", rel, lost, err)
	}
	got := ends.wait(t, 3)
	if got["rel/a"] != nil || got["rel/b"] != nil || !errors.Is(got["rel/d"], tenure.ErrLost) {
		t.Fatalf("lease ends: %v", got)
	}
	if !s.Held() || len(s.Leases()) != 0 {
		t.Fatalf("the session goes on, empty: %v %v", s.Held(), s.Leases())
	}
	if err := s.End(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSessionLossReachesEveryLease(t *testing.T) {
	srv := testserver.Start(t)
	needSessions(t, srv.URL)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}})
	ctx := context.Background()
	var ends leaseEnds
	s, err := c.OpenSession(ctx, tenure.SessionOptions{TTL: 900 * time.Millisecond, OnLeaseEnd: ends.add})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"loss/0", "loss/1", "loss/2", "loss/3", "loss/4"}
	res, err := s.Claim(ctx, names, tenure.ClaimOptions{})
	if err != nil || len(res.Granted) != 5 {
		t.Fatalf("claim: %+v %v", res, err)
	}
	forceEnd(t, srv.URL, s.ID)
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session's loss was not seen")
	}
	got := ends.wait(t, 5)
	var lost []string
	for n, err := range got {
		if errors.Is(err, tenure.ErrLost) {
			lost = append(lost, n)
		}
	}
	sort.Strings(lost)
	if len(lost) != 5 || !errors.Is(s.Err(), tenure.ErrLost) {
		t.Fatalf("lost leases %v, session %v", lost, s.Err())
	}
	for _, l := range res.Granted {
		if l.Held() || !errors.Is(l.Err(), tenure.ErrLost) {
			t.Fatalf("%v: %v", l, l.Err())
		}
	}
	if _, err := s.Claim(ctx, []string{"loss/more"}, tenure.ClaimOptions{}); !errors.Is(err, tenure.ErrLost) {
		t.Fatalf("claim after the loss: %v", err)
	}
}

func TestSessionExpiresWhenTheServerFreezes(t *testing.T) {
	srv := testserver.Start(t)
	needSessions(t, srv.URL)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}, RequestTimeout: 30 * time.Second})
	ctx := context.Background()
	s, err := c.OpenSession(ctx, tenure.SessionOptions{TTL: 900 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Acquire(ctx, "freeze/a", tenure.SessionAcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer srv.Signal(syscall.SIGCONT)
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the session did not run out")
	}
	if !errors.Is(s.Err(), tenure.ErrExpired) || !errors.Is(l.Err(), tenure.ErrExpired) || l.SafeFor() != 0 {
		t.Fatalf("session %v, lease %v", s.Err(), l.Err())
	}
}

func TestSessionSafeTimeIsTheSessions(t *testing.T) {
	srv := testserver.Start(t)
	needSessions(t, srv.URL)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}})
	ctx := context.Background()
	s, err := c.OpenSession(ctx, tenure.SessionOptions{TTL: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if sf := s.SafeFor(); sf <= 0 || sf > 3600*time.Millisecond {
		t.Fatalf("safe for %v after a 4 s session", sf)
	}
	l, err := s.Acquire(ctx, "safe/s", tenure.SessionAcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := l.SafeFor() - s.SafeFor(); d > 5*time.Millisecond || d < -5*time.Millisecond {
		t.Fatalf("lease safe for %v, session %v", l.SafeFor(), s.SafeFor())
	}
	if err := s.End(ctx); err != nil || l.Held() || !errors.Is(l.Err(), tenure.ErrReleased) {
		t.Fatalf("after End: %v, lease %v", err, l.Err())
	}
}

func TestHoldSession(t *testing.T) {
	srv := testserver.Start(t)
	needSessions(t, srv.URL)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}})
	ctx := context.Background()
	err := c.HoldSession(ctx, tenure.SessionOptions{TTL: 1500 * time.Millisecond}, []string{"hs/a", "hs/b"},
		func(ctx context.Context, s *tenure.Session, claim *tenure.ClaimResult) error {
			if len(claim.Granted) != 2 {
				return errors.New("not both granted")
			}
			time.Sleep(2 * time.Second)
			if !s.Held() || ctx.Err() != nil {
				return errors.New("not kept")
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "hs/a"); !errors.Is(err, tenure.ErrNotFound) {
		t.Fatalf("not ended at the end: %v", err)
	}
	err = c.HoldSession(ctx, tenure.SessionOptions{TTL: 900 * time.Millisecond}, []string{"hs/c"},
		func(ctx context.Context, s *tenure.Session, _ *tenure.ClaimResult) error {
			forceEnd(t, srv.URL, s.ID)
			<-ctx.Done() // cancelled on the loss
			return ctx.Err()
		})
	if !errors.Is(err, tenure.ErrLost) {
		t.Fatalf("HoldSession after a forced end: %v", err)
	}
}

func TestWatchEventsHearsTheSessionEnd(t *testing.T) {
	srv := testserver.Start(t)
	needSessions(t, srv.URL)
	c := newClient(t, tenure.Options{URLs: []string{srv.URL}, WatchEvents: true})
	ctx := context.Background()
	s, err := c.OpenSession(ctx, tenure.SessionOptions{TTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(30 * time.Second); !subscribers(t, srv.URL, 1); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the follower did not subscribe")
		}
	}
	forceEnd(t, srv.URL, s.ID)
	select {
	case <-s.Done(): // the renew is 10 s away: the event told
	case <-time.After(5 * time.Second):
		t.Fatal("the session's end was not heard")
	}
	if !errors.Is(s.Err(), tenure.ErrLost) {
		t.Fatalf("after session_ended: %v", s.Err())
	}
}
