// SPDX-License-Identifier: MIT

// The fair-share recipe over a real tenured: workers balance within one
// shard of each other, a worker that leaves has its shards taken by the
// others, one that joins gets its share from their surplus, and every
// shard reported gained is the live grant with the token given.  Skipped
// while tenured has no sessions (501).

package share_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"tenure"
	"tenure/internal/testserver"
	"tenure/share"
)

func TestTargetSplitsWithinOne(t *testing.T) {
	live := []string{"c", "a", "b"}
	sum := 0
	for _, me := range live {
		sum += share.Target(1000, live, me)
	}
	if sum != 1000 || share.Target(1000, live, "a") != 334 || share.Target(1000, live, "c") != 333 {
		t.Fatalf("split of 1000 over 3: a %d b %d c %d", share.Target(1000, live, "a"),
			share.Target(1000, live, "b"), share.Target(1000, live, "c"))
	}
	if share.Target(10, nil, "x") != 10 || share.Target(2, []string{"a", "b", "c"}, "c") != 0 {
		t.Fatal("alone, or more workers than shards")
	}
}

// owned is what a worker's callbacks say it holds.
type owned struct {
	mu     sync.Mutex
	leases map[string]*tenure.Lease
	lost   map[string]string // name -> why, as OnLoss said
}

func (o *owned) gain(ls map[string]*tenure.Lease) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for n, l := range ls {
		o.leases[n] = l
	}
}

func (o *owned) loss(names []string, why string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, n := range names {
		delete(o.leases, n)
		o.lost[n] = why
	}
}

func (o *owned) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.leases)
}

type group struct {
	t      *testing.T
	c      *tenure.Client
	shards []string
	ws     map[string]*owned
	stop   map[string]context.CancelFunc
	done   sync.WaitGroup
}

func (g *group) start(name string) {
	o := &owned{leases: map[string]*tenure.Lease{}, lost: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	g.ws[name], g.stop[name] = o, cancel
	g.done.Add(1)
	go func() {
		defer g.done.Done()
		err := share.Run(ctx, g.c, share.Options{Group: "g", Worker: name, Shards: g.shards,
			TTL: 1500 * time.Millisecond, OnGain: o.gain, OnLoss: o.loss})
		if err != nil {
			g.t.Errorf("%s: %v", name, err)
		}
	}()
}

// balanced waits until the live workers hold every shard, within one.
func (g *group) balanced(live ...string) {
	g.t.Helper()
	var counts []int
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		counts = counts[:0]
		sum, lo, hi := 0, len(g.shards), 0
		for _, w := range live {
			n := g.ws[w].count()
			counts = append(counts, n)
			sum += n
			if n < lo {
				lo = n
			}
			if n > hi {
				hi = n
			}
		}
		if sum == len(g.shards) && hi-lo <= 1 {
			g.check(live)
			return
		}
	}
	g.t.Fatalf("%v not balanced: %v", live, counts)
}

// check: every shard a worker was told it gained is the live grant.
func (g *group) check(live []string) {
	ctx := context.Background()
	for _, w := range live {
		o := g.ws[w]
		o.mu.Lock()
		for n, l := range o.leases {
			cr, err := g.c.Check(ctx, n, l.Token)
			if err != nil || !cr.Current || !l.Held() {
				g.t.Errorf("%s holds %s token %d: %+v %v", w, n, l.Token, cr, err)
			}
		}
		o.mu.Unlock()
	}
}

// forceRelease ends one shard of worker w on the server: w must report it
// lost (its round checks its shards against the list of held ones), and
// it is claimed again with a higher token.
func (g *group) forceRelease(w string) {
	g.t.Helper()
	o := g.ws[w]
	o.mu.Lock()
	var name string
	var old *tenure.Lease
	for n, l := range o.leases {
		name, old = n, l
		break
	}
	o.mu.Unlock()
	ctx := context.Background()
	if err := g.c.ForceRelease(ctx, name); err != nil {
		g.t.Fatal(err)
	}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		o.mu.Lock()
		why := o.lost[name]
		o.mu.Unlock()
		if why == "lost" {
			break
		}
		if time.Now().After(end) {
			g.t.Fatalf("the loss of %s went unseen (%q)", name, why)
		}
	}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		li, err := g.c.Get(ctx, name)
		if err == nil && li.Token > old.Token {
			return
		}
		if time.Now().After(end) {
			g.t.Fatalf("%s was not claimed again: %+v %v", name, li, err)
		}
	}
}

func TestWorkersShareTheShards(t *testing.T) {
	srv := testserver.Start(t)
	c, err := tenure.New(tenure.Options{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.OpenSession(context.Background(), tenure.SessionOptions{TTL: time.Second})
	var e *tenure.Error
	if errors.As(err, &e) && (e.Status == 404 || e.Status == 501) {
		t.Skipf("the server has no sessions yet: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	_ = s.End(context.Background())
	g := &group{t: t, c: c, ws: map[string]*owned{}, stop: map[string]context.CancelFunc{}}
	for i := 0; i < 31; i++ {
		g.shards = append(g.shards, fmt.Sprintf("shard:%02d", i))
	}
	for _, w := range []string{"w1", "w2", "w3"} {
		g.start(w)
	}
	g.balanced("w1", "w2", "w3")
	g.forceRelease("w1")
	g.balanced("w1", "w2", "w3")
	g.stop["w2"]() // leaves: its session ends, its shards are free
	g.balanced("w1", "w3")
	g.start("w4") // joins late: the others give their surplus back
	g.balanced("w1", "w3", "w4")
	for _, stop := range g.stop {
		stop()
	}
	g.done.Wait()
	if items, _, err := c.List(context.Background(), tenure.ListOptions{Prefix: "shard:"}); err != nil || len(items) != 0 {
		t.Fatalf("after every worker stopped: %d held, %v", len(items), err)
	}
}
