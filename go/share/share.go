// SPDX-License-Identifier: MIT

// Package share is the fair-share recipe of docs/SESSIONS.md: the workers
// of a group spread a list of shards evenly over the workers that are
// alive, and a shard moves from one to another only through the lease
// server, with a higher token at each move.
//
// Each worker opens a session with owner_id "<group>/<worker>", reads the
// live sessions of the group (GET /v1/sessions?prefix=<group>/) and
// follows the event stream (session_opened, session_ended, and the
// shards' own events).  Its target is its share: with S shards and n live
// sessions, ceil(S/n) for the first S mod n sessions in session_id order
// and floor(S/n) for the others, so every worker computes the same split
// and the counts differ by at most one.  Below target it claims free
// shards in one batch; above it, it calls OnLoss (which must return only
// once nothing writes those shards any more) and releases the surplus in
// one batch.  When its session is lost (a frozen or cut-off worker), every
// shard is reported lost and it joins again with a new session.  Each
// round also checks the shards it holds against the list of held shards:
// one whose live token is another (a force release, an end no event told
// of) is reported lost.
package share

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"time"

	"tenure"
)

// Options configure Run.
type Options struct {
	Group  string   // the group; no "/"
	Worker string   // this worker's name in the group
	Shards []string // every shard of the group, the same list in each worker
	// TTL of the worker's session; default 3 s.
	TTL time.Duration
	// Interval: the balance is looked at least this often, besides the
	// events; default 2 s.
	Interval time.Duration
	// Prefix of the shards' names, for the list of held shards and the
	// event stream; default their longest common prefix.
	Prefix string
	// OnGain gets the shards just claimed (name -> lease: stamp every
	// write with its Token).
	OnGain func(leases map[string]*tenure.Lease)
	// OnLoss gets the shards given up, and why: "released" (surplus,
	// released once OnLoss returns), "lost" or "expired" (the session or
	// the shard was lost: stop writing at once; the fence refuses stale
	// writes anyway), "stopped" (Run is ending).
	OnLoss func(names []string, reason string)
	// Log, when set, gets a line per error Run retried.
	Log func(msg string)
}

// Target is the share of the session me among the live session ids.
func Target(shards int, live []string, me string) int {
	ids := map[string]bool{me: true}
	for _, id := range live {
		ids[id] = true
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	rank := sort.SearchStrings(sorted, me)
	n := len(sorted)
	t := shards / n
	if rank < shards%n {
		t++
	}
	return t
}

func commonPrefix(names []string) string {
	if len(names) == 0 {
		return ""
	}
	lo, hi := names[0], names[0]
	for _, n := range names[1:] {
		if n < lo {
			lo = n
		}
		if n > hi {
			hi = n
		}
	}
	i := 0
	for i < len(lo) && i < len(hi) && lo[i] == hi[i] {
		i++
	}
	return lo[:i]
}

type worker struct {
	c     *tenure.Client
	o     Options
	owner string
	set   map[string]bool
	kick  chan struct{}

	mu    sync.Mutex
	lost  []*tenure.Lease // reported by the session
	owned map[string]*tenure.Lease
	s     *tenure.Session
}

// Run is one worker of the group until ctx is done; it then gives every
// shard back (OnLoss "stopped", then the session ends) and returns nil.
// Errors of the server are retried.
func Run(ctx context.Context, c *tenure.Client, o Options) error {
	if o.Group == "" || strings.Contains(o.Group, "/") || o.Worker == "" {
		return errors.New("share: a group without '/' and a worker name are needed")
	}
	if o.TTL <= 0 {
		o.TTL = 3 * time.Second
	}
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	w := &worker{c: c, o: o, owner: o.Group + "/" + o.Worker, set: map[string]bool{},
		kick: make(chan struct{}, 1), owned: map[string]*tenure.Lease{}}
	for _, s := range o.Shards {
		if w.set[s] {
			return errors.New("share: shard " + s + " is given twice")
		}
		w.set[s] = true
	}
	if w.o.Prefix == "" {
		w.o.Prefix = commonPrefix(o.Shards)
	}
	ectx, stopEvents := context.WithCancel(ctx)
	defer stopEvents()
	go w.follow(ectx)
	w.poke()
	for {
		var done <-chan struct{}
		if w.s != nil {
			done = w.s.Done()
		}
		t := time.NewTimer(o.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			w.leave()
			return nil
		case <-w.kick:
		case <-done:
		case <-t.C:
		}
		t.Stop()
		if err := w.step(ctx); err != nil && ctx.Err() == nil {
			w.logf("share %s: %v", w.owner, err)
			time.Sleep(o.TTL / 10)
			w.poke()
		}
	}
}

func (w *worker) logf(format string, args ...any) {
	if w.o.Log != nil {
		w.o.Log(fmt.Sprintf(format, args...))
	}
}

func (w *worker) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *worker) giveUp(names []string, why string) {
	w.mu.Lock()
	for _, n := range names {
		delete(w.owned, n)
	}
	w.mu.Unlock()
	if len(names) > 0 && w.o.OnLoss != nil {
		sort.Strings(names)
		w.o.OnLoss(names, why)
	}
}

func (w *worker) ownedNames() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := make([]string, 0, len(w.owned))
	for n := range w.owned {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (w *worker) step(ctx context.Context) error {
	if w.s != nil {
		if err := w.s.Err(); err != nil {
			why := "lost"
			if errors.Is(err, tenure.ErrExpired) {
				why = "expired"
			}
			w.giveUp(w.ownedNames(), why)
			w.s = nil
		}
	}
	w.mu.Lock()
	lost := w.lost
	w.lost = nil
	var gone []string
	for _, l := range lost {
		if w.owned[l.Name] == l {
			gone = append(gone, l.Name)
		}
	}
	w.mu.Unlock()
	w.giveUp(gone, "lost")
	if w.s == nil {
		s, err := w.c.OpenSession(ctx, tenure.SessionOptions{Owner: w.owner, TTL: w.o.TTL,
			OnLeaseEnd: w.leaseEnded})
		if err != nil {
			return err
		}
		w.s = s
	}
	return w.balance(ctx, w.s)
}

func (w *worker) leaseEnded(l *tenure.Lease, err error) {
	if errors.Is(err, tenure.ErrLost) { // lost or expired, not released
		w.mu.Lock()
		w.lost = append(w.lost, l)
		w.mu.Unlock()
		w.poke()
	}
}

func (w *worker) balance(ctx context.Context, s *tenure.Session) error {
	live, err := w.liveSessions(ctx)
	if err != nil {
		return err
	}
	target := Target(len(w.o.Shards), live, s.ID)
	taken, err := w.taken(ctx)
	if err != nil {
		return err
	}
	// a shard whose live token is another (or none) was lost: a force
	// release, an end no event told of
	var gone []string
	w.mu.Lock()
	for n, l := range w.owned {
		if tok, ok := taken[n]; !ok || tok != l.Token {
			gone = append(gone, n)
		}
	}
	w.mu.Unlock()
	w.giveUp(gone, "lost")
	owned := w.ownedNames()
	if len(owned) > target {
		surplus := owned[target:]
		w.mu.Lock()
		leases := make([]*tenure.Lease, 0, len(surplus))
		for _, n := range surplus {
			leases = append(leases, w.owned[n])
		}
		w.mu.Unlock()
		w.giveUp(append([]string(nil), surplus...), "released")
		_, _, err := s.Release(ctx, leases...)
		return err
	}
	want := target - len(owned)
	if want <= 0 {
		return nil
	}
	var free []string
	for _, n := range w.o.Shards {
		if _, held := taken[n]; !held {
			free = append(free, n)
		}
	}
	if len(free) == 0 {
		return nil
	}
	rand.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
	if len(free) > want {
		free = free[:want]
	}
	res, err := s.Claim(ctx, free, tenure.ClaimOptions{})
	if err != nil {
		return err
	}
	got := map[string]*tenure.Lease{}
	for _, l := range res.Granted {
		if w.set[l.Name] {
			got[l.Name] = l
		}
	}
	w.mu.Lock()
	for n, l := range got {
		w.owned[n] = l
	}
	w.mu.Unlock()
	if len(got) > 0 && w.o.OnGain != nil {
		w.o.OnGain(got)
	}
	if len(got) < want && len(res.Held)+len(res.LockDelay) > 0 {
		time.Sleep(time.Duration(10+rand.Intn(40)) * time.Millisecond)
		w.poke() // others took some of the same: look again soon
	}
	return nil
}

func (w *worker) liveSessions(ctx context.Context) ([]string, error) {
	var ids []string
	after := ""
	for {
		page, next, err := w.c.Sessions(ctx, tenure.ListOptions{Prefix: w.o.Group + "/", After: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, si := range page {
			ids = append(ids, si.ID)
		}
		if next == "" {
			return ids, nil
		}
		after = next
	}
}

// taken are the shards held now, with their live tokens.
func (w *worker) taken(ctx context.Context) (map[string]uint64, error) {
	taken := map[string]uint64{}
	after := ""
	for {
		page, next, err := w.c.List(ctx, tenure.ListOptions{Prefix: w.o.Prefix, After: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, li := range page {
			taken[li.Name] = li.Token
		}
		if next == "" {
			return taken, nil
		}
		after = next
	}
}

func (w *worker) leave() {
	w.giveUp(w.ownedNames(), "stopped")
	if w.s != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = w.s.End(ctx)
		w.s = nil
	}
}

// follow pokes the worker on the events that can change its share: a
// session of the group opened or ended, a shard ended (it may be free), a
// reset.
func (w *worker) follow(ctx context.Context) {
	es := w.c.Events(ctx, w.o.Prefix, tenure.EventOptions{})
	defer es.Close()
	mine := w.o.Group + "/"
	for es.Next() {
		ev := es.Event()
		switch {
		case ev.Type == "session_opened" || ev.Type == "session_ended":
			if strings.HasPrefix(ev.OwnerID, mine) {
				w.poke()
			}
		case ev.Type == "reset" || (w.set[ev.Name] && ev.Type != "acquired"):
			w.poke()
		}
	}
}
